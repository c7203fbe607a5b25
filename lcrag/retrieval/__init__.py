"""Retrieval over chunks with provenance: BM25, dense, rerank, fusion, expansion, pipeline.

Common interface (:class:`Retriever`): ``search(query, k) -> [(chunk, score)]``,
``search_batch(queries, k)``, ``rank(query)``; ``candidates=doc_ids`` restricts retrieval.
"""

from .base import Retriever, stable_order, top_k_rows
from .bm25 import BM25Matrix, BM25Retriever
from .dense import DenseRetriever
from .dedup import filter_near_duplicates
from .expansion import QueryVariant, extract_keywords, prf_terms, query_variants
from .fusion import rrf, rrf_hits
from .pipeline import PipelineConfig, PipelineHit, candidate_constrained_search
from .rerank import BiEncoderReranker, CrossEncoderReranker, Reranker, make_reranker
from .tokenize import STOPWORDS, tokenize


__all__ = [
    "Retriever", "stable_order", "top_k_rows", "BM25Matrix", "BM25Retriever", "DenseRetriever", "make_reranker",
    "filter_near_duplicates", "QueryVariant", "extract_keywords", "prf_terms", "query_variants", "rrf", "rrf_hits",
    "STOPWORDS", "tokenize", "PipelineConfig", "PipelineHit", "candidate_constrained_search",
    "Reranker", "BiEncoderReranker", "CrossEncoderReranker",
]
