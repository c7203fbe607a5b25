"""The multihop_rag study folder (see README.md)."""
