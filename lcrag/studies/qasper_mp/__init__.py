"""The qasper_mp study folder (see README.md)."""
