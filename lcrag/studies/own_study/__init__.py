"""The own_study study folder (see README.md)."""
