"""Shared file formats: readers, writers and validators of formats other tools define, used by any study.

* :mod:`.trec_rag` — TREC-RAG JSONL runs (the format the LongEval-RAG organisers consume) and their validator.

The TREC run and qrels files of a study's retrieval stage are written by ``lcrag export --format trec``
(:mod:`lcrag.formats.trec_run`).
"""
