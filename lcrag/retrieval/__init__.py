"""lcrag.retrieval"""
