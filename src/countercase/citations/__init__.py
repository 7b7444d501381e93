"""Judgment-to-judgment citations: mined from the texts and resolved to corpus documents
(:mod:`~countercase.citations.links`), and the citation collection built from them, the stage
``citations`` (:mod:`~countercase.citations.run`), whose queries the reranker and the
bi-encoder train on."""
