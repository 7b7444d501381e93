"""The pipeline's stages, by name. ``dvc.yaml`` and ``experiments/dvc.yaml`` are written from
this registry (``python -m countercase.dag``); a test fails when a committed file differs.

A stage is its ``countercase`` command, what it reads besides code (``deps``: data, gold labels,
choices, recordings; a dep may say why in a pair), the ``params.yaml`` keys it depends on, and
why it runs. What it writes is :data:`countercase.layout.STAGE_OUTPUTS`; its code deps are the
modules its command imports (:mod:`countercase.dag.code`). Every path is
:mod:`countercase.layout`'s (``L``), so no path is typed twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from countercase import layout as L

DEFAULT, OPT_IN = L.PIPELINE, L.OPT_IN_PIPELINE  # `make repro`, `make repro-extended`

Dep = Path | str | tuple[Path | str, str]  # a path, or a path and why it is read
# what a stage that composes systems reads: the registry and every choice a system reads
CHOSEN: tuple[Dep, ...] = (L.SYSTEMS, L.TUNING_CHOICE, L.RERANKER_CHOICE,
                           (L.LTR_CHOICE, "read with every choice: the trees' learned system"),
                           (L.SERVING_CHOICE, "the system served"))
AILA_TOPICS: tuple[Dep, ...] = (L.AILA_QUERIES, L.AILA_QRELS_PRECEDENTS, L.AILA_QRELS_STATUTES)


@dataclass(frozen=True)
class Stage:
    name: str
    pipeline: Path
    command: str  # the `countercase` command it runs
    args: Mapping[str, Path | str | bool] = field(default_factory=dict)  # all but its defaults
    why: str = ""
    deps: tuple[Dep, ...] = ()
    params: tuple[str, ...] | None = None
    persist: bool = False  # DVC keeps its cached outputs while it runs (stage `embed`)

    @property
    def cmd(self) -> str:
        """The command line: the command and the options whose values are not its defaults
        (a flag by its name)."""
        words = ["countercase", self.command]
        for option, value in self.args.items():
            words += [option] if value is True else [option, str(value)]
        return " ".join(words)

# what the confirmatory validity experiment reads, run or rerun
V2_DEPS: tuple[Dep, ...] = (
    L.VALIDITY_V2, L.VALIDITY_V2_CASES, L.CITATIONS, L.DOCUMENTS, L.JUDGMENT_SHEETS, L.METADATA,
    L.ADJACENCY, L.INDEX, L.DENSE, L.FACT_INDEX,
    (L.RERANKER, "the domain reranker and its citation groups"),
    L.RERANKER_CHOICE, L.LTR,
    (L.HOLDINGS, "the applicability features' holding profiles"),
    L.DISPOSITIVE_GOLD,
    (L.GOLD / "perturbation_labels.jsonl", "the hand labels the label is set against"),
    L.TUNING_CHOICE, L.SERVING_CHOICE, L.LTR_RULE)
V2_PARAMS = ("seed", "perturb.case_chars", "retrieve.rerank_model", "retrieve.rerank_backend",
             "index.threads")


STAGES: tuple[Stage, ...] = (
    Stage(
        "ingest", DEFAULT,
        "ingest", {"--aila": L.AILA_CASEDOCS, "--pdfs": L.PDFS, "--metrics": L.metrics("ingest"),
                   "--timing": L.timing("ingest")},
        deps=(L.AILA_CASEDOCS,
              (L.RAW / "CHECKSUMS.json", "the embedded data as shipped"),
              L.PDFS),
        params=("ingest",),
    ),
    Stage(
        "extract", DEFAULT,
        "extract", {"--timing": L.timing("extract")},
        deps=(L.INGEST,
              L.STATUTE_TEXTS,
              L.SC_METADATA),
        params=("extract",),
    ),
    Stage(
        "extract_eval", DEFAULT,
        "extract-eval",
        deps=(L.EXTRACT,
              (L.GOLD / "metadata_gold_a.jsonl", "the files it globs (metadata_gold_*.jsonl)"),
              L.GOLD / "metadata_gold_b.jsonl",
              L.RHETORICAL_ROLES),
        params=("extract",),
    ),
    Stage(
        "train_ner", DEFAULT,
        "train-ner", {"--metrics": L.metrics("ner"), "--timing": L.timing("ner")},
        deps=(L.RAW / "ner",),
        params=("seed", "device", "ner"),
    ),
    Stage(
        "factsheets", DEFAULT,
        "factsheets", {"--metrics": L.metrics("factsheets"), "--timing": L.timing("factsheets"),
                       "--ner-model": L.NER_MODEL},
        deps=(L.INGEST,
              L.EXTRACT,
              L.NER_MODEL,
              L.AILA_QUERIES,
              (L.recording("factsheets"), "the LLM's answers (written where it asks anew)"),
              (L.NUMBER_ROLES_SAMPLE, "the number roles' labelled samples"),
              L.GOLD / "number_roles_labels.jsonl",
              L.GOLD / "number_roles_sample_2.jsonl",
              L.GOLD / "number_roles_labels_2.jsonl"),
        params=("extract.facts_fallback_fraction", "factsheets", "llm.mode", "ner.threads",
                "seed"),
    ),
    Stage(
        "adjacency", DEFAULT,
        "adjacency", {"--metrics": L.metrics("adjacency")},
        deps=(L.EXTRACT,),
    ),
    Stage(
        "index", DEFAULT,
        "index", {"--timing": L.timing("index")},
        deps=(L.EXTRACT,
              L.INGEST,
              L.AILA_STATUTES),
        params=("index.threads", "extract.encoder", "extract.chunk_size", "extract.chunk_overlap"),
    ),
    Stage(
        "index_facts", DEFAULT,
        "index-facts", {"--metrics": L.metrics("index_facts")},
        deps=(L.JUDGMENT_SHEETS,
              L.METADATA,
              L.STATUTE_TABLE),
        params=("index.threads",),
    ),
    Stage(
        "embed", DEFAULT,
        "embed", {"--timing": L.timing("embed")},
        why=("persist: stored embeddings of unchanged texts are reused (a parameter change "
             "further down the pipeline never re-embeds; see countercase.index.dense); in "
             "onnx-int8 the citation collection's tuning half calibrates the int8 model"),
        deps=(L.CHUNKS,
              L.STATUTE_CHUNKS,
              (L.CITATIONS, "the tuning half, whose chunks calibrate onnx-int8")),
        params=("seed", "index.encoder", "index.precision", "index.max_seq_length",
                "index.batch_size", "index.int8_method", "index.int8_calibration_texts", "index.int8_tasks"),
        persist=True,
    ),
    Stage(
        "latency", DEFAULT,
        "latency",
        deps=(L.AILA_QUERIES,
              L.INDEX,
              L.DENSE,
              L.CHUNKS,
              L.METADATA,
              (L.RERANKER, "the reranker timed on the top rerank_depth"),
              (L.LTR, "the served learned ranker, timed"),
              (L.HOLDINGS, "the applicability features' holding profiles"),
              L.LTR_RULE,
              L.JUDGMENT_SHEETS,
              L.FACT_INDEX,
              (L.CITATIONS, "the prior's links"),
              *CHOSEN),
        params=("retrieve", "evaluate"),
    ),
    Stage(
        "citations", DEFAULT,
        "citations", {"--metrics": L.metrics("citations")},
        why=("the citation collection: corpus judgments citing others as masked queries (issue: "
             "retrieval quality); every precedent choice of `tune` is made on its tuning half"),
        deps=(L.DOCUMENTS,
              L.METADATA,
              L.SECTIONS,
              L.AILA_QUERIES),
        params=("seed", "citations"),
    ),
    Stage(
        "holdings", DEFAULT,
        "holdings",
        why=("what each judgment's holding turns on (issue 57): the provisions its reasons decide, "
             "the evidence, parties and thresholds they state, with spans; scored on a labelled "
             "sample"),
        deps=(L.DOCUMENTS,
              L.METADATA,
              (L.HOLDING_GOLD, "the labelled sample (data/gold/holding_profiles.md)"),
              (L.HOLDINGS_CHOICE, "the learned scorer, chosen on the sample's development half")),
    ),
    Stage(
        "targets", DEFAULT,
        "targets",
        why=("citation-grounded counterfactual targets (issue 57): for each root edit of every "
             "citation case, the precedents judgments holding the new value cite markedly more "
             "(appear) or less (drop), leave-one-out"),
        deps=(L.CITATIONS,
              L.DOCUMENTS,
              L.JUDGMENT_SHEETS,
              L.METADATA,
              L.SECTION_EDGES,
              L.HOLDINGS),
        params=("targets", "perturb.case_chars"),
    ),
    Stage(
        "tune", DEFAULT,
        "tune",
        why=("the grids, read by the paper (too wide for `dvc metrics show`), and the choice with "
             "its rule, committed before the test is scored"),
        deps=(L.INDEX,
              L.DENSE,
              L.FACT_INDEX,
              L.CITATIONS,
              *AILA_TOPICS),
        params=("retrieve", "evaluate", "tune"),
    ),
    Stage(
        "train_reranker", DEFAULT,
        "train-reranker", {"--metrics": L.metrics("reranker"), "--timing": L.timing("reranker")},
        why=("BM25 and dense negatives; validation candidates from the configured pipeline (MMR "
             "reads the dense vectors, the retrieve keys and the tuned values of "
             "configs/tuning_choice.yaml), as the evaluate stage ranks them. It writes the "
             "reranker on or off and its blend weight by the rule, before the test sees it, and "
             "its metrics: citation counts, the learning curve, validation, ONNX parity and "
             "speed, depth against latency."),
        deps=(L.INGEST,
              L.EXTRACT,
              L.INDEX,
              L.DENSE,
              L.AILA_QUERIES,
              L.AILA_QRELS_PRECEDENTS,
              (L.CITATIONS, "its dev queries choose; its held-out and dev queries never train"),
              L.TUNING_CHOICE),
        params=("seed", "device", "reranker", "biencoder.dev_share", "retrieve.use_bm25",
                "retrieve.use_dense", "retrieve.use_mmr", "retrieve.rrf_k", "retrieve.mmr_lambda",
                "retrieve.rerank_depth", "retrieve.bm25_depth", "retrieve.prefilter_threshold",
                "evaluate.chunk_depth", "evaluate.depth"),
    ),
    Stage(
        "train_biencoder", OPT_IN,
        "train-biencoder", {"--metrics": L.metrics("biencoder")},
        why=("the dense encoder fine-tuned on the citation collection's tuning pairs (issue 15's "
             "lever); the pairs are the reranker stage's mined groups (no work twice). Opt-in by "
             "configs/budget_rule.yaml's opt_in: its encoder is read only by embed_ft, whose "
             "gain was not significant"),
        deps=(L.RERANKER_GROUPS,
              L.CITATIONS),
        params=("seed", "device", "biencoder", "index.encoder"),
    ),
    Stage(
        "train_ltr", DEFAULT,
        "train-ltr", {"--metrics": L.metrics("ltr"), "--timing": L.timing("ltr")},
        why=("the learned rankers (configs/ltr_rule.yaml, written before their code): features of "
             "the dev queries' pools, the grid cross-validated, seven models, their out-of-fold "
             "MAP, importance and learning curve; and the served system's route per kind of "
             "query (configs/serving_rule.yaml: the dev queries and AILA_Q1..Q10), before any "
             "test query is scored by them"),
        deps=(L.INGEST,
              L.EXTRACT,
              L.INDEX,
              L.DENSE,
              L.FACT_INDEX,
              L.JUDGMENT_SHEETS,
              (L.CITATIONS, "its tuning half's dev queries train; the held-out half is never read"),
              (L.HOLDINGS, "the applicability features' holding profiles"),
              L.TUNING_CHOICE,
              L.RERANKER_CHOICE,
              (L.RERANKER, "the served system, measured on the same dev queries"),
              L.LTR_RULE,
              L.SERVING_RULE,
              (L.AILA, "its tuning queries AILA_Q1..Q10 only"),
              L.SYSTEMS),
        params=("seed", "biencoder.dev_share", "citations.query_chars", "retrieve", "evaluate"),
    ),
    Stage(
        "evaluate", DEFAULT,
        "evaluate", {"--metrics": L.metrics("retrieval"), "--summary": L.metrics("evaluation"),
                     "--timing": L.timing("evaluate")},
        why=("every system of configs/systems.yaml on its collections; the summary (significance "
             "tests, timings, leakage and unretrievable documents) is read by the paper, too wide "
             "for `dvc metrics show`"),
        deps=(L.INDEX,
              L.DENSE,
              L.FACT_INDEX,
              L.INGEST,
              L.EXTRACT,
              (L.RERANKER, "the condition `rerank` (skipped, with a warning, while missing)"),
              L.CITATIONS,
              (L.LTR, "the learned rankers' models"),
              (L.HOLDINGS, "the applicability features' holding profiles"),
              L.JUDGMENT_SHEETS,
              (L.LTR_RULE, "the learned rankers' settings and declared families of tests"),
              *CHOSEN,
              *AILA_TOPICS),
        params=("retrieve", "evaluate", "seed", "citations.query_chars", "extract.encoder"),
    ),
    Stage(
        "regress", DEFAULT,
        "regress", {"--verify": True, "--all": True, "--runs": L.EVALUATE,
                    "--metrics": L.metrics("regress")},
        why=("the expected scores (committed inputs, written only by `countercase regress "
             "--update`) checked against the evaluate stage's run files: any drift fails the "
             "pipeline"),
        deps=(L.REGRESSIONS,
              L.EVALUATE,
              L.CITATIONS,
              *CHOSEN,
              *AILA_TOPICS),
        params=("retrieve", "evaluate", "index", "biencoder"),
    ),
    Stage(
        "leakage", DEFAULT,
        "leakage-audit",
        why=("the statute task's near-copy audit (issue 45): its statute systems scored again with "
             "each query's near-copies kept from the statute bridge at lower shares of its text, "
             "and without the queries that have one"),
        deps=(L.AILA_QUERIES,
              L.AILA_QRELS_STATUTES,
              L.INDEX,
              L.DENSE,
              L.FACT_INDEX,
              L.EXTRACT,
              (L.RERANKER, "the pipeline's reranker"),
              L.CITATIONS,
              (L.LTR, "the learned ranker under ltr_bridge"),
              (L.HOLDINGS, "the applicability features' holding profiles"),
              L.JUDGMENT_SHEETS,
              L.LTR_RULE,
              *CHOSEN),
        params=("retrieve", "evaluate", "leakage", "seed"),
    ),
    Stage(
        "perturb", DEFAULT,
        "perturb", {"--metrics": L.metrics("counterfactual"), "--timing": L.timing("perturb"),
                    "--confirmatory": L.metrics("validity_v2"),
                    "--directional": L.metrics("validity_v3"),
                    "--holdings": L.metrics("holdings")},
        why=("the trees search the learned system ltr_unmasked when ltr is served "
             "(configs/ltr_choice.yaml, the rule's consequence), else the pipeline without the "
             "domain reranker (perturb.system: no_rerank), on which the validity experiment "
             "runs, so only the reranker's citation groups are read; the pipeline's fact weight "
             "is chosen on the tuning cases (configs/trees_choice.yaml); metrics/validity_v2.json "
             "and metrics/validity_v3.json, which the opt-in stages commit, are read as the paper "
             "reads the opt-in metrics, not declared (a dep would pull the opt-in pipeline in); "
             "metrics/holdings.json, the holding profiles' accuracy, is a metric of stage holdings"),
        deps=(L.AILA_QUERIES,
              (L.metrics("holdings"), "the holding profiles' accuracy, reported"),
              L.ADJACENCY,
              L.INDEX,
              L.DENSE,
              (L.RERANKER_GROUPS, "the model too if the trees rerank"),
              L.DOCUMENTS,
              L.JUDGMENT_SHEETS,
              L.FACT_INDEX,
              L.METADATA,
              L.DISPOSITIVE_GOLD,
              (L.LEGAL_AUDIT, "the legal audit's samples and labels (issue 41)"),
              L.TUNING_CHOICE,
              L.RERANKER_CHOICE,
              L.SYSTEMS,
              (L.LTR_CHOICE, "whether the trees search the learned system"),
              (L.LTR, "its model"),
              (L.HOLDINGS, "the applicability features' holding profiles"),
              (L.LTR_RULE, "its candidate pool's depths"),
              (L.CITATIONS, "the citation links its prior counts")),
        params=("seed", "perturb", "retrieve"),
    ),
    Stage(
        "llm_check", DEFAULT,
        "llm-check", {"--metrics": L.metrics("llm_check"), "--timing": L.timing("llm_check")},
        why=("the plan's LLM check (plausible? operative?) on the root candidates of the corpus "
             "query cases, against the validity labels and two annotators' hand labels "
             "(countercase.perturb.llm_check)"),
        deps=(L.SECTION_EDGES,
              L.DOCUMENTS,
              L.JUDGMENT_SHEETS,
              L.METADATA,
              L.RERANKER_GROUPS,
              L.VALIDITY_ROWS,
              L.DISPOSITIVE_GOLD,
              L.PERTURBATION_LABELS,
              (L.recording("llm_check"), "the LLM's answers (written where it asks anew)"),
              (L.LLM_CALIBRATION, "the candidates labelled to measure it as a classifier")),
        params=("seed", "llm.mode", "perturb.per_type", "perturb.tuning_cases",
                "perturb.corpus_cases", "perturb.case_chars", "perturb.granularity", "llm_check"),
    ),
    Stage(
        "explain", DEFAULT,
        "explain", {"--profiles": L.HOLDING_PROFILES, "--metrics": L.metrics("explanations"),
                    "--timing": L.timing("explain")},
        why=("grounded explanations of every result and edge of every tree (the holding each "
             "result shares, each edge's citation-grounded targets), each sentence re-verified "
             "against its sources (countercase.explain)"),
        deps=(L.TREES,
              L.JUDGMENT_SHEETS,
              L.CHUNKS,
              L.HOLDINGS,
              L.CITATIONS,
              L.DOCUMENTS),
        params=("targets",),
    ),
    Stage(
        "topology", DEFAULT,
        "topology",
        why=("tree shapes and precedent robustness against citation in-degree, bench size and "
             "constitutional questions (countercase.topology.run)"),
        deps=(L.TREES,
              L.RERANKER_GROUPS,
              L.METADATA),
        params=("seed",),
    ),
    Stage(
        "rerank_llm", DEFAULT,
        "rerank-llm", {"--metrics": L.metrics("rerank_llm")},
        why=("the fact sheets' local LLM as a pointwise reranker of the `no_rerank` condition's "
             "top documents (AILA test queries, both tasks); its answers are recorded "
             "(recordings/llm/rerank_llm.jsonl.gz). No dependency on data/processed/reranker: the "
             "domain reranker is off here."),
        deps=(L.INDEX,
              L.DENSE,
              L.CHUNKS,
              L.METADATA,
              (L.recording("rerank_llm"), "the LLM's answers (written where it asks anew)"),
              *CHOSEN,
              *AILA_TOPICS),
        params=("seed", "llm.mode", "rerank_llm", "retrieve", "evaluate.depth",
                "evaluate.chunk_depth"),
    ),
    Stage(
        "llm_replay", DEFAULT,
        "llm-replay", {"--metrics": L.metrics("llm_replay")},
        why=("a seeded sample of the recorded LLM answers asked again: does the installed model "
             "still give them? (countercase.factsheet.llm_replay). Reruns only when a recording "
             "or the model's hash changes."),
        deps=(L.recording("factsheets"),
              L.recording("llm_check"),
              L.recording("rerank_llm")),
        params=("seed", "llm.check_sample", "llm.model_sha256"),
    ),
    Stage(
        "explore_bench", DEFAULT,
        "explore-bench",
        why=("the explorer's edit timed to the redrawn page on the whole corpus (target: 2 s, no "
             "reranker)"),
        deps=(L.AILA_QUERIES,
              L.INDEX,
              L.DENSE,
              L.FACT_INDEX,
              L.CHUNKS,
              L.METADATA,
              L.DOCUMENTS,
              L.JUDGMENT_SHEETS,
              L.SECTION_EDGES,
              L.TREES_CHOICE,
              L.LTR,
              (L.HOLDINGS, "the applicability features' holding profiles"),
              L.LTR_RULE,
              L.CITATIONS,
              *CHOSEN),
        params=("retrieve", "perturb"),
    ),
    Stage(
        "notebooks", DEFAULT,
        "notebooks", {"--timing": L.timing("notebooks")},
        why=("every notebook executed on the pipeline's outputs; the executed copies are kept"),
        deps=(L.NOTEBOOK_SOURCES,
              ("src/countercase", "the notebooks may call any part of the package"),
              "params.yaml",
              L.AILA,
              L.EXTRACT,
              L.INDEX,
              L.DENSE,
              L.ADJACENCY,
              L.FACTSHEETS,
              L.CITATIONS,
              L.EVALUATE,
              (L.LTR, "the trees' learned system"),
              (L.HOLDINGS, "the applicability features' holding profiles"),
              L.LTR_CHOICE,
              L.SERVING_CHOICE,
              L.VALIDITY_ROWS,
              L.EXPLANATIONS,
              L.metrics("extraction"),
              L.metrics("retrieval"),
              L.metrics("counterfactual"),
              L.metrics("llm_check"),
              L.metrics("topology")),
    ),
    Stage(
        "paper", DEFAULT,
        "paper",
        why=("also reads the opt-in pipeline's committed metrics (metrics/*_ft.json, "
             "tuning_ft.json, configs/tuning_ft_choice.yaml), which are not deps here: as deps "
             "they would pull the opt-in stages into `dvc repro`; the paper's manifest hashes "
             "them instead. Its outputs are committed, so the paper reads without running "
             "anything (issue 40)"),
        deps=(("src/countercase/explore/render.py", "the drawn tree's layout"),
              ("src/countercase/report/rebuild.py", "the earlier build's reports beside this"),
              ("src/countercase/report/readme.py", "the scale-out tables, shared with the README"),
              ("src/countercase/report/stage_times.py", "the table of the stages' times"),
              L.PAPER_SOURCE,
              L.PAPER_BIBLIOGRAPHY,
              L.TRACK_RESULTS,
              "paper/retrieval_levers.yaml",
              "paper/history",
              L.metrics("ingest"),
              L.metrics("extraction"),
              L.metrics("retrieval"),
              L.metrics("evaluation"),
              L.metrics("latency"),
              L.metrics("tuning"),
              L.metrics("citations"),
              (L.metrics("scaleout"), "the scale-out benchmark (countercase.scaleout.bench)"),
              (L.timing("cpu"), "the precision benchmark (python -m countercase.runtime.cpu)"),
              (L.timing("embed"), "the embedding pass's minutes"),
              ("params.yaml", "the configured first stage, in words"),
              L.metrics("factsheets"),
              L.metrics("counterfactual"),
              L.metrics("reranker"),
              L.metrics("ner"),
              L.metrics("adjacency"),
              L.metrics("rerank_llm"),
              L.metrics("regress"),
              L.metrics("llm_check"),
              L.metrics("explanations"),
              L.metrics("topology"),
              (L.metrics("leakage"), "the statute task's leakage audit"),
              (L.metrics("ltr"), "the learned ranker's dev scores"),
              L.TREES_CHOICE,
              (L.LTR_RULE, "its amendments, counted in the limitations"),
              (L.DISPOSITIVE_GOLD, "who labelled it"),
              L.PERTURBATION_LABELS,
              (Path("docs/explorer.png"), "the explorer's figure"),
              L.EVALUATE / "aila2019-task1/per_query.csv",
              L.EVALUATE / "aila2019-task2/per_query.csv",
              L.EVALUATE / "citations/per_query.csv",
              L.EXPLANATIONS / "AILA_Q30.json",
              *CHOSEN),
    ),
    Stage(
        "embed_ft", OPT_IN,
        "embed", {"--encoder": L.BIENCODER_MODEL, "--out": L.DENSE_FT,
                  "--timing": L.timing("embed_ft")},
        why=("the chunks embedded by the fine-tuned encoder, for the dense_ft and hybrid_ft "
             "conditions"),
        deps=(L.BIENCODER,
              L.CHUNKS,
              L.STATUTE_CHUNKS),
        # float32 whatever index.precision says: the int8 rule measured the packaged encoder
        params=("index.max_seq_length", "index.batch_size"),
    ),
    Stage(
        "tune_ft", OPT_IN,
        "tune-ft",
        why=("the fine-tuned encoder's fusion weight, chosen on the dev third of the citation "
             "tuning half (queries it never trained on); the choice and its rule committed before "
             "the test is scored"),
        deps=(L.INDEX,
              L.DENSE,
              L.DENSE_FT,
              L.BIENCODER,
              L.CITATIONS,
              *CHOSEN),
        params=("retrieve", "evaluate", "tune.dense_weights"),
    ),
    Stage(
        "evaluate_ft", OPT_IN,
        "evaluate", {"--opt-in": True, "--out": L.EVALUATE_FT,
                     "--metrics": L.metrics("retrieval_ft"),
                     "--summary": L.metrics("evaluation_ft"), "--timing": L.timing("evaluate_ft"),
                     "--resume-dir": L.INTERIM / 'evaluate_ft', "--compare-runs": L.EVALUATE},
        why=("the conditions of the fine-tuned encoder (--opt-in), tested against the default "
             "pipeline's reference runs (full, bm25_docs, ...), which are read back, not ranked "
             "again; its summary is read by the paper"),
        deps=((L.EVALUATE, "the default pipeline's reference runs, tested against"),
              L.INDEX,
              L.DENSE,
              L.DENSE_FT,
              L.BIENCODER,
              L.FACT_INDEX,
              L.INGEST,
              L.EXTRACT,
              (L.RERANKER, "the condition `rerank` (skipped, with a warning, while missing)"),
              L.CITATIONS,
              L.TUNING_FT_CHOICE,
              (L.LTR_RULE, "the declared families of tests"),
              *CHOSEN,
              *AILA_TOPICS),
        params=("retrieve", "evaluate", "seed", "citations.query_chars", "extract.encoder"),
    ),
    Stage(
        "regress_ft", OPT_IN,
        "regress", {"--verify": True, "--all": True, "--opt-in": True, "--runs": L.EVALUATE_FT,
                    "--metrics": L.metrics("regress_ft")},
        why=("the opt-in conditions' expected scores (regressions/, written only by `countercase "
             "regress --update`) checked against evaluate_ft's run files: any drift fails it"),
        deps=(L.REGRESSIONS,
              L.EVALUATE_FT,
              L.CITATIONS,
              L.TUNING_FT_CHOICE,
              (L.DENSE_FT / "precedents/meta.json", "names the fine-tuned conditions' encoder"),
              *CHOSEN,
              *AILA_TOPICS),
        params=("retrieve", "evaluate", "index", "biencoder"),
    ),
    Stage(
        "validity_v2", OPT_IN,
        "validity-v2", {"--metrics": L.metrics("validity_v2"), "--timing": L.timing("validity_v2")},
        why=("the confirmatory validity experiment (issue 44): it refuses to run unless "
             "docs/preregistration/validity_v2.md is final, committed before the commit run and "
             "unchanged since a run recorded its hash; opt-in by the budget rule (the default "
             "pipeline's 80 minutes are spent), its summary committed for the perturb stage"),
        deps=V2_DEPS,
        params=V2_PARAMS,
    ),
    Stage(
        "validity_v2_rerun", OPT_IN,
        "validity-v2", {"--rerun": True, "--out": L.VALIDITY_V2_RERUN_OUT,
                        "--metrics": L.metrics("validity_v2_rerun"),
                        "--timing": L.timing("validity_v2_rerun")},
        why=("the confirmatory experiment's cases run again on this build's perturbation rules, "
             "models and code (exploratory: the rules changed after the preregistered run); the "
             "paper reads whether its reversed secondary results hold, and one worked pair each"),
        deps=V2_DEPS,
        params=V2_PARAMS,
    ),
    Stage(
        "validity_v3", OPT_IN,
        "validity-v3", {"--metrics": L.metrics("validity_v3"), "--timing": L.timing("validity_v3")},
        why=("the confirmatory test of directional sensitivity on citation-grounded targets "
             "(issue 57): it refuses to run unless docs/preregistration/validity_v3.md is final, "
             "committed before the commit run and unchanged since a run recorded its hash; "
             "opt-in like validity_v2, its summary committed for the perturb stage"),
        deps=(L.VALIDITY_V3,
              L.VALIDITY_V3_CASES,
              L.TARGETS,
              L.CITATIONS,
              L.DOCUMENTS,
              L.JUDGMENT_SHEETS,
              L.METADATA,
              L.ADJACENCY,
              L.INDEX,
              L.DENSE,
              L.FACT_INDEX,
              (L.RERANKER, "the domain reranker"),
              L.RERANKER_CHOICE,
              L.LTR,
              (L.HOLDINGS, "the applicability features' holding profiles"),
              (L.LTR_CHOICE, "the system the trees search"),
              (L.SERVING_CHOICE, "the system served"),
              L.TUNING_CHOICE,
              L.TREES_CHOICE,
              L.LTR_RULE),
        params=("seed", "perturb", "retrieve", "index.threads"),
    ),
)
BY_NAME: dict[str, Stage] = {stage.name: stage for stage in STAGES}
