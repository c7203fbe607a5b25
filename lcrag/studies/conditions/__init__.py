"""The conditions study folder (see README.md)."""
