"""lcrag.llm"""
