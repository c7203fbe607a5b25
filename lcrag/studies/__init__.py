"""lcrag.studies"""
