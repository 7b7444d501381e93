"""Index stage: BM25 (Lucene via Anserini) with in-Lucene metadata filters, and query reduction.

Nothing here imports Pyserini or starts a JVM at import time; the JVM starts on the first
:class:`Bm25Searcher`, and :func:`build_bm25_index` runs Anserini in a Java subprocess.
"""

from countercase.index.bm25 import (
    BENCH_TYPES,
    OUTCOMES,
    SECTION_TYPES,
    Bm25Searcher,
    IndexBuildError,
    LuceneFilter,
    TooManyClausesError,
    build_bm25_index,
    filter_tokens,
    index_metadata_path,
    read_index_metadata,
)
from countercase.index.query_terms import (
    DEFAULT_MAX_TERMS,
    LUCENE_MAX_CLAUSES,
    EmptyQueryError,
    QueryReducer,
    bm25_idf,
    reduce_terms,
    term_frequencies,
)

__all__ = [
    "BENCH_TYPES", "DEFAULT_MAX_TERMS", "LUCENE_MAX_CLAUSES", "OUTCOMES", "SECTION_TYPES",
    "Bm25Searcher", "EmptyQueryError", "IndexBuildError", "LuceneFilter", "QueryReducer",
    "TooManyClausesError", "bm25_idf", "build_bm25_index", "filter_tokens",
    "index_metadata_path", "read_index_metadata", "reduce_terms", "term_frequencies",
]
