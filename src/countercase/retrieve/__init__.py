"""Retrieval stages: fusion (RRF), diversity (MMR), reranking; the pipeline composes them.

Nothing here imports torch or sentence-transformers at import time
(:class:`~countercase.retrieve.rerank.CrossEncoderReranker` does, when constructed).
"""

from countercase.retrieve.fusion import reciprocal_rank_fusion
from countercase.retrieve.mmr import mmr, normalise_relevance
from countercase.retrieve.rerank import (
    CacheStats,
    CachedReranker,
    CrossEncoderReranker,
    Reranker,
    query_key,
    rerank,
)

__all__ = [
    "CacheStats", "CachedReranker", "CrossEncoderReranker", "Reranker", "mmr",
    "normalise_relevance", "query_key", "reciprocal_rank_fusion", "rerank",
]
