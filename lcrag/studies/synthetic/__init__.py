"""The synthetic study folder (see README.md)."""
