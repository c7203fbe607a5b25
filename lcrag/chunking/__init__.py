"""lcrag.chunking"""
