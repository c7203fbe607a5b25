"""lcrag.data"""
