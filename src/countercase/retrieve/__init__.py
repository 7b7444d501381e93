"""Retrieval stages: fusion, diversity (MMR), reranking; the pipeline composes them."""
