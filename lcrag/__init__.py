"""lcrag: is the bottleneck retrieving the evidence or reading it?

Build long-context (LC) and retrieval (RAG) versions of the same questions, make models
answer with cited evidence lines, score answer and evidence separately and jointly, and
regenerate the tables and figures of the two source papers.
"""

__version__ = "0.1.0"
