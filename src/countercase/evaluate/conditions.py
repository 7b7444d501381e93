"""The experimental conditions: each one configuration of the one retrieval pipeline.

A condition is a name, a sentence saying what it is, the level it searches (``chunks``: the
pipeline over chunks, max-pooled to documents; ``docs``: BM25 over whole documents; ``facts``:
the fact channel alone, the query's rule fact sheet against the judgments'; ``lever``: a lever
the pipeline does not have yet, built as ``configs/tuning_choice.yaml`` chose it, or with the
fine-tuned encoder at the weight ``configs/tuning_ft_choice.yaml`` chose), its
overrides of ``params.yaml``'s ``retrieve`` section and the tasks it applies to. ``full`` is the
configured pipeline as it stands; the others switch stages off, so together they are the
ablations. On the statute task every condition but ``full`` and ``precedent_bridge`` searches
the statute texts only (no bridge).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from countercase import layout
from countercase.config import RetrieveParams
from countercase.experiment.systems import candidate_params

BOTH = ("precedents", "statutes")
_DIRECT = {"statute_bridge": False}
_EQUAL = {"fusion_weights": {"precedents": {"bm25": 1.0, "dense": 1.0},
                             "statutes": {"bm25": 1.0, "dense": 1.0}}}


@dataclass(frozen=True)
class Condition:
    name: str
    description: str
    level: str = "chunks"
    overrides: dict[str, Any] = field(default_factory=dict)
    tasks: tuple[str, ...] = BOTH
    chunking: tuple[int, int] | None = None  # (size, overlap) of a chunking variant, BM25 only
    lever: str | None = None  # with level "lever": passages, docs, docs_fusion or prior
    dense_dir: Path | None = None  # embeddings of another encoder (default: the embed stage's)
    reference: str = "full"  # the condition it varies, which the paper sets it against

    def params(self, base: RetrieveParams, chunk_depth: int) -> RetrieveParams:
        return candidate_params(base, chunk_depth, **self.overrides)

    @property
    def opt_in(self) -> bool:
        """Whether only the opt-in pipeline (experiments/dvc.yaml, `make repro-extended`) runs
        it: it reads the fine-tuned encoder's embeddings, which the default pipeline does not
        build (issue 40's budget rule: its gain was not significant on its own held-out data)."""
        return self.dense_dir == layout.DENSE_FT

    def reads_vectors(self, base: RetrieveParams, chunk_depth: int, task: str) -> bool:
        """Whether this condition reads a chunk's vector on ``task``: the dense ranking at a
        weight above 0, or MMR (levers are taken to read them; BM25 over documents or over
        another chunking never does). Nothing is embedded for a run that reads none."""
        if self.level == "docs" or self.chunking is not None:
            return False
        if self.level == "lever" or self.dense_dir is not None:
            return True
        p = self.params(base, chunk_depth)
        weights = p.fusion_weights.get(task, {})
        # as Retriever.search runs them: a retriever at weight 0 is skipped unless it is alone
        bm25 = p.use_bm25 and (weights.get("bm25", 1.0) > 0 or not p.use_dense)
        dense = p.use_dense and (weights.get("dense", 1.0) > 0 or not bm25)
        return dense or (p.use_mmr and task in p.mmr_tasks)


CONDITIONS = (
    Condition("bm25_docs", "BM25 (k1 0.9, b 0.4) over whole documents, query reduced to 1,000 "
              "terms", level="docs"),
    Condition("bm25", "BM25 over chunks, max-pooled to documents",
              overrides={**_DIRECT, "use_dense": False, "use_mmr": False, "use_rerank": False}),
    Condition("bm25_chunks128", "BM25 over 128-token chunks (overlap 16), max-pooled",
              overrides={"use_dense": False, "use_mmr": False, "use_rerank": False},
              tasks=("precedents",), chunking=(128, 16)),
    Condition("bm25_chunks510", "BM25 over 510-token chunks (overlap 64), max-pooled",
              overrides={"use_dense": False, "use_mmr": False, "use_rerank": False},
              tasks=("precedents",), chunking=(510, 64)),
    Condition("dense", "dense (exact inner product) over chunks, max-pooled",
              overrides={**_DIRECT, "use_bm25": False, "use_mmr": False, "use_rerank": False}),
    Condition("hybrid_rrf", "BM25 + dense, reciprocal rank fusion with equal weights",
              overrides={**_DIRECT, **_EQUAL, "use_mmr": False, "use_rerank": False}),
    Condition("hybrid_rrf_mmr", "BM25 + dense, RRF with equal weights, MMR",
              overrides={**_DIRECT, **_EQUAL, "use_mmr": True, "mmr_tasks": list(BOTH),
                         "use_rerank": False}),
    Condition("dense_ft", "dense over chunks with the encoder fine-tuned on citation pairs "
              "(stage train_biencoder), max-pooled",
              overrides={**_DIRECT, "use_bm25": False, "use_mmr": False, "use_rerank": False},
              tasks=("precedents",), dense_dir=layout.DENSE_FT),
    Condition("hybrid_ft", "BM25 + the fine-tuned dense encoder, RRF with equal weights",
              overrides={**_DIRECT, **_EQUAL, "use_mmr": False, "use_rerank": False},
              tasks=("precedents",), dense_dir=layout.DENSE_FT),
    Condition("precedent_bridge", "statutes cited by the precedents retrieved for the query, "
              "alone", overrides={"bridge_weights": {"direct": 0.0, "precedents": 1.0}},
              tasks=("statutes",)),
    Condition("fact_channel", "the fact channel alone: BM25 over the legal-fact tokens of the "
              "query's rule fact sheet (stage index_facts)", level="facts",
              tasks=("precedents",)),
    # the first-stage levers' fixed settings, measured where tune chooses them: on the first
    # stage, against no_rerank (configs/budget_rule.yaml evaluate_first_stage_ablations)
    Condition("facts_equal", "the first stage fused with the fact channel at weight 1 "
              "(a fixed setting; the tuned weight is retrieve.fact_weight)",
              overrides={"fact_weight": 1.0, "use_rerank": False}, reference="no_rerank"),
    Condition("reduced_facts", "the first stage given the query's fact-bearing sentences "
              "alone (retrieve.query_reduction facts)",
              overrides={"query_reduction": "facts", "use_rerank": False},
              tasks=("precedents",), reference="no_rerank"),
    Condition("reduced_boost", "the first stage given the query with its fact-bearing "
              "sentences counted twice (retrieve.query_reduction facts_boost)",
              overrides={"query_reduction": "facts_boost", "use_rerank": False},
              tasks=("precedents",), reference="no_rerank"),
    Condition("passages_tuned", "BM25 over chunks with the tuned pooling of passage scores "
              "and k1, b (configs/tuning_choice.yaml)", level="lever", lever="passages",
              tasks=("precedents",)),
    Condition("docs_tuned", "BM25 over whole documents with the tuned k1, b", level="lever",
              lever="docs", tasks=("precedents",)),
    Condition("full_docs", "the configured pipeline fused by RRF with docs_tuned at the tuned "
              "weight", level="lever", lever="docs_fusion", tasks=("precedents",)),
    Condition("full_docs_prior", "full_docs fused with the citation prior (how often the "
              "corpus cites a judgment) at the tuned weight", level="lever", lever="prior",
              tasks=("precedents",)),
    Condition("full_ft", "the configured pipeline with the fine-tuned encoder's dense ranking "
              "fused at the weight chosen on its dev queries (configs/tuning_ft_choice.yaml)",
              level="lever", lever="ft", tasks=("precedents",), dense_dir=layout.DENSE_FT),
    Condition("tuned_ft", "the tuned system (configs/tuning_choice.yaml tuned_system) built on "
              "full_ft", level="lever", lever="tuned_ft", tasks=("precedents",),
              dense_dir=layout.DENSE_FT),
    # the baseline of the citation-collection tuning: `full` as AILA_Q1..Q10 alone had chosen it
    Condition("full_aila_tuned", "the pipeline as tuned on AILA_Q1..Q10 alone, before the "
              "citation collection: MMR on precedents; statute dense weight 1, bridge depth 10, "
              "rank offset 5", overrides={
                  "mmr_tasks": ["precedents"], "bridge_depth": 10, "bridge_rank_offset": 5.0,
                  "fusion_weights": {"precedents": {"bm25": 1.0, "dense": 0.0},
                                     "statutes": {"bm25": 1.0, "dense": 1.0}}}),
    Condition("full", "the configured pipeline (params.yaml retrieve: precedents tuned on the "
              "citation collection's tuning half, statutes and the bridge on AILA_Q1..Q10)"),
    # the reranker's gain is rerank against no_rerank, whichever of them `full` is
    Condition("no_rerank", "the configured pipeline without the domain reranker (the first "
              "stage: fusion, MMR, the statute bridge)", overrides={"use_rerank": False}),
    Condition("rerank", "the configured pipeline with the domain reranker (stage "
              "train_reranker, retrieve.rerank_backend) over the top rerank_depth chunks",
              overrides={"use_rerank": True}, reference="no_rerank"),
)
BY_NAME = {c.name: c for c in CONDITIONS}
DEFAULT = tuple(c for c in CONDITIONS if not c.opt_in)  # what the evaluate stage runs
OPT_IN = tuple(c for c in CONDITIONS if c.opt_in)  # what the opt-in evaluate_ft stage runs
# on the citation collection's held-out half (hundreds of queries): the system as configured,
# its baselines and the levers (hybrid_rrf: the packaged encoder's hybrid, hybrid_ft's control;
# rerank against no_rerank: the reranker's gain, as it never trains on a held-out query); the
# chunking variants are AILA-only
HELDOUT = ("bm25_docs", "bm25", "dense", "hybrid_rrf", "dense_ft", "hybrid_ft", "fact_channel",
           "facts_equal", "reduced_facts", "reduced_boost", "passages_tuned", "docs_tuned",
           "full_docs", "full_docs_prior", "full_ft", "tuned_ft", "full_aila_tuned", "no_rerank",
           "rerank", "full")
