"""The longeval study folder (see README.md)."""
