"""The nolima study folder (see README.md)."""
