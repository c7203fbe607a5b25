"""lcrag.scoring"""
