"""The pipeline's stages, by name. ``dvc.yaml`` and ``experiments/dvc.yaml`` are written from
this registry (``python -m countercase.dag``); a test fails when a committed file differs.

A stage is its ``countercase`` command, what it reads besides code (``deps``: data, gold labels,
choices, recordings; a dep may say why in a pair), the ``params.yaml`` keys it depends on, and
why it runs. What it writes is :data:`countercase.layout.STAGE_OUTPUTS`; its code deps are the
modules its command imports (:mod:`countercase.dag.code`). Every path is
:mod:`countercase.layout`'s (``L``), so no path is typed twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from countercase import layout as L

DEFAULT, OPT_IN = L.PIPELINE, L.OPT_IN_PIPELINE  # `make repro`, `make repro-extended`

Dep = Path | str | tuple[Path | str, str]  # a path, or a path and why it is read


@dataclass(frozen=True)
class Stage:
    name: str
    pipeline: Path
    cmd: str
    why: str = ""
    deps: tuple[Dep, ...] = ()
    params: tuple[str, ...] | None = None
    persist: bool = False  # DVC keeps its cached outputs while it runs (stage `embed`)


STAGES: tuple[Stage, ...] = (
    Stage(
        "ingest", DEFAULT,
        f"countercase ingest --aila {L.AILA_CASEDOCS} --pdfs {L.PDFS} --out {L.INGEST} "
        f"--metrics {L.metrics('ingest')} --timing {L.timing('ingest')}",
        deps=(L.AILA_CASEDOCS,
              (L.RAW / "CHECKSUMS.json", "the embedded data as shipped"),
              L.PDFS),
        params=("ingest",),
    ),
    Stage(
        "extract", DEFAULT,
        f"countercase extract --documents {L.DOCUMENTS} --statutes {L.STATUTE_TEXTS} "
        f"--sc-metadata {L.SC_METADATA} --out {L.EXTRACT} --timing {L.timing('extract')}",
        deps=(L.INGEST,
              L.STATUTE_TEXTS,
              L.SC_METADATA),
        params=("extract",),
    ),
    Stage(
        "extract_eval", DEFAULT,
        f"countercase extract-eval --metadata {L.METADATA} --summary {L.EXTRACT_SUMMARY} "
        f"--gold {L.GOLD} --rhetorical-roles {L.RHETORICAL_ROLES} --out "
        f"{L.metrics('extraction')}",
        deps=(L.EXTRACT,
              (L.GOLD / "metadata_gold_a.jsonl", "the files it globs (metadata_gold_*.jsonl)"),
              L.GOLD / "metadata_gold_b.jsonl",
              L.RHETORICAL_ROLES),
        params=("extract",),
    ),
    Stage(
        "train_ner", DEFAULT,
        f"countercase train-ner --data {L.NER_DATA} --out {L.NER} --metrics "
        f"{L.metrics('ner')} --timing {L.timing('ner')}",
        deps=(L.RAW / "ner",),
        params=("seed", "device", "ner"),
    ),
    Stage(
        "factsheets", DEFAULT,
        f"countercase factsheets --documents {L.DOCUMENTS} --extract-dir {L.EXTRACT} "
        f"--queries {L.AILA_QUERIES} --out {L.FACTSHEETS} --metrics "
        f"{L.metrics('factsheets')} --timing {L.timing('factsheets')} --ner-model "
        f"{L.NER_MODEL}",
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
        f"countercase adjacency --extract-dir {L.EXTRACT} --out {L.SECTION_EDGES} "
        f"--metrics {L.metrics('adjacency')}",
        deps=(L.EXTRACT,),
    ),
    Stage(
        "index", DEFAULT,
        f"countercase index --chunks {L.CHUNKS} --metadata {L.METADATA} --documents "
        f"{L.DOCUMENTS} --statutes {L.AILA_STATUTES} --statute-table {L.STATUTE_TABLE} "
        f"--out {L.INDEX} --timing {L.timing('index')}",
        deps=(L.EXTRACT,
              L.INGEST,
              L.AILA_STATUTES),
        params=("index.threads", "extract.encoder", "extract.chunk_size", "extract.chunk_overlap"),
    ),
    Stage(
        "index_facts", DEFAULT,
        f"countercase index-facts --sheets {L.JUDGMENT_SHEETS} --metadata {L.METADATA} "
        f"--statute-table {L.STATUTE_TABLE} --out {L.FACT_INDEX} --metrics "
        f"{L.metrics('index_facts')}",
        deps=(L.JUDGMENT_SHEETS,
              L.METADATA,
              L.STATUTE_TABLE),
        params=("index.threads",),
    ),
    Stage(
        "embed", DEFAULT,
        f"countercase embed --chunks {L.CHUNKS} --statute-chunks {L.STATUTE_CHUNKS} "
        f"--citations {L.CITATIONS} --out {L.DENSE} --timing {L.timing('embed')}",
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
        f"countercase latency --queries {L.AILA_QUERIES} --out {L.metrics('latency')}",
        deps=(L.AILA_QUERIES,
              L.INDEX,
              L.DENSE,
              L.CHUNKS,
              L.METADATA,
              (L.RERANKER, "the reranker timed on the top rerank_depth"),
              L.TUNING_CHOICE,
              L.RERANKER_CHOICE,
              L.SYSTEMS,
              (L.LTR_CHOICE, "read with every choice: the trees' learned system"),
              (L.SERVING_CHOICE, "the system served"),
              (L.LTR, "the served learned ranker, timed"),
              (L.HOLDINGS, "the applicability features' holding profiles"),
              L.LTR_RULE,
              L.JUDGMENT_SHEETS,
              L.FACT_INDEX,
              (L.CITATIONS, "the prior's links")),
        params=("retrieve", "evaluate"),
    ),
    Stage(
        "citations", DEFAULT,
        f"countercase citations --documents {L.DOCUMENTS} --extract-dir {L.EXTRACT} "
        f"--aila-dir {L.AILA} --out {L.CITATIONS} --metrics {L.metrics('citations')}",
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
        f"countercase holdings --documents {L.DOCUMENTS} --metadata {L.METADATA} --gold "
        f"{L.HOLDING_GOLD} --choice {L.HOLDINGS_CHOICE} --out {L.HOLDINGS} --metrics "
        f"{L.metrics('holdings')}",
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
        f"countercase targets --citations {L.CITATIONS} --documents {L.DOCUMENTS} --sheets "
        f"{L.JUDGMENT_SHEETS} --metadata {L.METADATA} --edges {L.SECTION_EDGES} --profiles "
        f"{L.HOLDING_PROFILES} --out {L.TARGETS} --metrics {L.metrics('targets')}",
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
        f"countercase tune --aila-dir {L.AILA} --citations {L.CITATIONS} --out "
        f"{L.metrics('tuning')} --choice {L.TUNING_CHOICE}",
        why=("the grids, read by the paper (too wide for `dvc metrics show`), and the choice with "
             "its rule, committed before the test is scored"),
        deps=(L.AILA_QUERIES,
              L.AILA_QRELS_PRECEDENTS,
              L.AILA_QRELS_STATUTES,
              L.INDEX,
              L.DENSE,
              L.FACT_INDEX,
              L.CITATIONS),
        params=("retrieve", "evaluate", "tune"),
    ),
    Stage(
        "train_reranker", DEFAULT,
        f"countercase train-reranker --documents {L.DOCUMENTS} --extract-dir {L.EXTRACT} "
        f"--index-dir {L.INDEX} --dense-dir {L.DENSE} --aila-dir {L.AILA} --citations "
        f"{L.CITATIONS} --out {L.RERANKER} --metrics {L.metrics('reranker')} --timing "
        f"{L.timing('reranker')} --resume-dir {L.RERANKER_RESUME} --choice "
        f"{L.RERANKER_CHOICE}",
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
        f"countercase train-biencoder --groups {L.RERANKER_GROUPS} --citations "
        f"{L.CITATIONS} --out {L.BIENCODER} --metrics {L.metrics('biencoder')} "
        f"--resume-dir {L.BIENCODER_RESUME}",
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
        f"countercase train-ltr --citations {L.CITATIONS} --sheets {L.JUDGMENT_SHEETS} "
        f"--fact-index {L.FACT_INDEX} --documents {L.DOCUMENTS} --rule {L.LTR_RULE} --choice "
        f"{L.TUNING_CHOICE} --out {L.LTR} --ltr-choice {L.LTR_CHOICE} --serving-rule "
        f"{L.SERVING_RULE} --serving-choice {L.SERVING_CHOICE} --aila-dir {L.AILA} --metrics "
        f"{L.metrics('ltr')} --timing {L.timing('ltr')}",
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
        f"countercase evaluate --aila-dir {L.AILA} --out {L.EVALUATE} --metrics "
        f"{L.metrics('retrieval')} --summary {L.metrics('evaluation')} --timing "
        f"{L.timing('evaluate')} --resume-dir {L.EVALUATE_RESUME}",
        why=("every system of configs/systems.yaml on its collections; the summary (significance "
             "tests, timings, leakage and unretrievable documents) is read by the paper, too wide "
             "for `dvc metrics show`"),
        deps=(L.AILA_QUERIES,
              L.AILA_QRELS_PRECEDENTS,
              L.AILA_QRELS_STATUTES,
              L.INDEX,
              L.DENSE,
              L.FACT_INDEX,
              L.INGEST,
              L.EXTRACT,
              (L.RERANKER, "the condition `rerank` (skipped, with a warning, while missing)"),
              L.CITATIONS,
              L.TUNING_CHOICE,
              L.RERANKER_CHOICE,
              (L.LTR, "the learned rankers' models"),
              (L.HOLDINGS, "the applicability features' holding profiles"),
              L.JUDGMENT_SHEETS,
              (L.LTR_RULE, "the learned rankers' settings and declared families of tests"),
              L.SYSTEMS,
              (L.LTR_CHOICE, "read with every choice: the trees' learned system"),
              (L.SERVING_CHOICE, "the system served")),
        params=("retrieve", "evaluate", "seed", "citations.query_chars", "extract.encoder"),
    ),
    Stage(
        "regress", DEFAULT,
        f"countercase regress --verify --all --runs {L.EVALUATE} --regressions "
        f"{L.REGRESSIONS} --aila-dir {L.AILA} --metrics {L.metrics('regress')}",
        why=("the expected scores (committed inputs, written only by `countercase regress "
             "--update`) checked against the evaluate stage's run files: any drift fails the "
             "pipeline"),
        deps=(L.REGRESSIONS,
              L.EVALUATE,
              L.AILA_QUERIES,
              L.AILA_QRELS_PRECEDENTS,
              L.AILA_QRELS_STATUTES,
              L.CITATIONS,
              L.TUNING_CHOICE,
              L.RERANKER_CHOICE,
              L.SYSTEMS,
              (L.LTR_CHOICE, "read with every choice: the trees' learned system"),
              (L.SERVING_CHOICE, "the system served")),
        params=("retrieve", "evaluate", "index", "biencoder"),
    ),
    Stage(
        "leakage", DEFAULT,
        f"countercase leakage-audit --aila-dir {L.AILA} --metrics {L.metrics('leakage')}",
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
              L.TUNING_CHOICE,
              L.RERANKER_CHOICE,
              (L.LTR, "the learned ranker under ltr_bridge"),
              (L.HOLDINGS, "the applicability features' holding profiles"),
              L.JUDGMENT_SHEETS,
              L.LTR_RULE,
              L.SYSTEMS,
              L.LTR_CHOICE,
              L.SERVING_CHOICE),
        params=("retrieve", "evaluate", "leakage", "seed"),
    ),
    Stage(
        "perturb", DEFAULT,
        f"countercase perturb --queries {L.AILA_QUERIES} --edges {L.SECTION_EDGES} --out "
        f"{L.TREES} --documents {L.DOCUMENTS} --sheets {L.JUDGMENT_SHEETS} --fact-index "
        f"{L.FACT_INDEX} --groups {L.RERANKER_GROUPS} --gold {L.DISPOSITIVE_GOLD} "
        f"--metrics {L.metrics('counterfactual')} --timing {L.timing('perturb')} "
        f"--choice {L.TREES_CHOICE} --confirmatory {L.metrics('validity_v2')} --directional "
        f"{L.metrics('validity_v3')} --holdings {L.metrics('holdings')}",
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
        f"countercase llm-check --edges {L.SECTION_EDGES} --documents {L.DOCUMENTS} "
        f"--sheets {L.JUDGMENT_SHEETS} --metadata {L.METADATA} --groups "
        f"{L.RERANKER_GROUPS} --gold {L.DISPOSITIVE_GOLD} --validity {L.VALIDITY_ROWS} "
        f"--labels {L.PERTURBATION_LABELS} --out {L.LLM_CHECK} --metrics "
        f"{L.metrics('llm_check')} --timing {L.timing('llm_check')}",
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
        f"countercase explain --trees {L.TREES} --sheets {L.JUDGMENT_SHEETS} --chunks "
        f"{L.CHUNKS} --profiles {L.HOLDING_PROFILES} --citations {L.CITATIONS} --documents "
        f"{L.DOCUMENTS} --out {L.EXPLANATIONS} --metrics {L.metrics('explanations')} "
        f"--timing {L.timing('explain')}",
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
        f"countercase topology --trees {L.TREES} --groups {L.RERANKER_GROUPS} --metadata "
        f"{L.METADATA} --out {L.metrics('topology')}",
        why=("tree shapes and precedent robustness against citation in-degree, bench size and "
             "constitutional questions (countercase.topology.run)"),
        deps=(L.TREES,
              L.RERANKER_GROUPS,
              L.METADATA),
        params=("seed",),
    ),
    Stage(
        "rerank_llm", DEFAULT,
        f"countercase rerank-llm --aila-dir {L.AILA} --index-dir {L.INDEX} --dense-dir "
        f"{L.DENSE} --chunks {L.CHUNKS} --metadata {L.METADATA} --out {L.RERANK_LLM} "
        f"--metrics {L.metrics('rerank_llm')}",
        why=("the fact sheets' local LLM as a pointwise reranker of the `no_rerank` condition's "
             "top documents (AILA test queries, both tasks); its answers are recorded "
             "(recordings/llm/rerank_llm.jsonl.gz). No dependency on data/processed/reranker: the "
             "domain reranker is off here."),
        deps=(L.AILA_QUERIES,
              L.AILA_QRELS_PRECEDENTS,
              L.AILA_QRELS_STATUTES,
              L.INDEX,
              L.DENSE,
              L.CHUNKS,
              L.METADATA,
              (L.recording("rerank_llm"), "the LLM's answers (written where it asks anew)"),
              L.TUNING_CHOICE,
              L.RERANKER_CHOICE,
              L.SYSTEMS,
              (L.LTR_CHOICE, "read with every choice: the trees' learned system"),
              (L.SERVING_CHOICE, "the system served")),
        params=("seed", "llm.mode", "rerank_llm", "retrieve", "evaluate.depth",
                "evaluate.chunk_depth"),
    ),
    Stage(
        "llm_replay", DEFAULT,
        f"countercase llm-replay --recordings {L.RECORDINGS} --metrics "
        f"{L.metrics('llm_replay')}",
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
        f"countercase explore-bench --queries 10 --out {L.timing('explorer')}",
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
              L.TUNING_CHOICE,
              L.RERANKER_CHOICE,
              L.TREES_CHOICE,
              L.SYSTEMS,
              (L.LTR_CHOICE, "the trees' learned system"),
              (L.SERVING_CHOICE, "the system served"),
              L.LTR,
              (L.HOLDINGS, "the applicability features' holding profiles"),
              L.LTR_RULE,
              L.CITATIONS),
        params=("retrieve", "perturb"),
    ),
    Stage(
        "notebooks", DEFAULT,
        f"countercase notebooks --src {L.NOTEBOOK_SOURCES} --out "
        f"{L.NOTEBOOKS} --timing {L.timing('notebooks')}",
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
        f"countercase paper --source {L.PAPER_SOURCE} --out {L.PAPER_HTML} --pdf "
        f"{L.PAPER_PDF} --manifest {L.PAPER_MANIFEST}",
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
              L.TUNING_CHOICE,
              L.RERANKER_CHOICE,
              L.TREES_CHOICE,
              (L.LTR_CHOICE, "read with every choice: the trees' learned system"),
              (L.SERVING_CHOICE, "the system served"),
              (L.LTR_RULE, "its amendments, counted in the limitations"),
              L.SYSTEMS,
              (L.DISPOSITIVE_GOLD, "who labelled it"),
              L.PERTURBATION_LABELS,
              (Path("docs/explorer.png"), "the explorer's figure"),
              L.EVALUATE / "aila2019-task1/per_query.csv",
              L.EVALUATE / "aila2019-task2/per_query.csv",
              L.EVALUATE / "citations/per_query.csv",
              L.EXPLANATIONS / "AILA_Q30.json"),
    ),
    Stage(
        "embed_ft", OPT_IN,
        f"countercase embed --encoder {L.BIENCODER_MODEL} --chunks {L.CHUNKS} "
        f"--statute-chunks {L.STATUTE_CHUNKS} --out {L.DENSE_FT} --timing "
        f"{L.timing('embed_ft')}",
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
        f"countercase tune-ft --citations {L.CITATIONS} --split {L.BIENCODER_SPLIT} "
        f"--ft-dense {L.DENSE_FT} --choice {L.TUNING_CHOICE} --out "
        f"{L.metrics('tuning_ft')} --ft-choice {L.TUNING_FT_CHOICE}",
        why=("the fine-tuned encoder's fusion weight, chosen on the dev third of the citation "
             "tuning half (queries it never trained on); the choice and its rule committed before "
             "the test is scored"),
        deps=(L.INDEX,
              L.DENSE,
              L.DENSE_FT,
              L.BIENCODER,
              L.CITATIONS,
              L.TUNING_CHOICE,
              L.RERANKER_CHOICE,
              L.SYSTEMS,
              (L.LTR_CHOICE, "read with every choice: the trees' learned system"),
              (L.SERVING_CHOICE, "the system served")),
        params=("retrieve", "evaluate", "tune.dense_weights"),
    ),
    Stage(
        "evaluate_ft", OPT_IN,
        f"countercase evaluate --opt-in --aila-dir {L.AILA} --out {L.EVALUATE_FT} "
        f"--metrics {L.metrics('retrieval_ft')} --summary {L.metrics('evaluation_ft')} "
        f"--timing {L.timing('evaluate_ft')} --resume-dir {L.INTERIM / 'evaluate_ft'} "
        f"--compare-runs {L.EVALUATE}",
        why=("the conditions of the fine-tuned encoder (--opt-in), tested against the default "
             "pipeline's reference runs (full, bm25_docs, ...), which are read back, not ranked "
             "again; its summary is read by the paper"),
        deps=((L.EVALUATE, "the default pipeline's reference runs, tested against"),
              L.AILA_QUERIES,
              L.AILA_QRELS_PRECEDENTS,
              L.AILA_QRELS_STATUTES,
              L.INDEX,
              L.DENSE,
              L.DENSE_FT,
              L.BIENCODER,
              L.FACT_INDEX,
              L.INGEST,
              L.EXTRACT,
              (L.RERANKER, "the condition `rerank` (skipped, with a warning, while missing)"),
              L.CITATIONS,
              L.TUNING_CHOICE,
              L.TUNING_FT_CHOICE,
              L.RERANKER_CHOICE,
              (L.LTR_RULE, "the declared families of tests"),
              L.SYSTEMS,
              (L.LTR_CHOICE, "read with every choice: the trees' learned system"),
              (L.SERVING_CHOICE, "the system served")),
        params=("retrieve", "evaluate", "seed", "citations.query_chars", "extract.encoder"),
    ),
    Stage(
        "regress_ft", OPT_IN,
        f"countercase regress --verify --all --opt-in --runs {L.EVALUATE_FT} "
        f"--regressions {L.REGRESSIONS} --aila-dir {L.AILA} --metrics "
        f"{L.metrics('regress_ft')}",
        why=("the opt-in conditions' expected scores (regressions/, written only by `countercase "
             "regress --update`) checked against evaluate_ft's run files: any drift fails it"),
        deps=(L.REGRESSIONS,
              L.EVALUATE_FT,
              L.AILA_QUERIES,
              L.AILA_QRELS_PRECEDENTS,
              L.AILA_QRELS_STATUTES,
              L.CITATIONS,
              L.TUNING_CHOICE,
              L.TUNING_FT_CHOICE,
              (L.DENSE_FT / "precedents/meta.json", "names the fine-tuned conditions' encoder"),
              L.RERANKER_CHOICE,
              L.SYSTEMS,
              (L.LTR_CHOICE, "read with every choice: the trees' learned system"),
              (L.SERVING_CHOICE, "the system served")),
        params=("retrieve", "evaluate", "index", "biencoder"),
    ),
    Stage(
        "validity_v2", OPT_IN,
        f"countercase validity-v2 --out {L.VALIDITY_V2_OUT} --metrics {L.metrics('validity_v2')} "
        f"--timing {L.timing('validity_v2')}",
        why=("the confirmatory validity experiment (issue 44): it refuses to run unless "
             "docs/preregistration/validity_v2.md is final, committed before the commit run and "
             "unchanged since a run recorded its hash; opt-in by the budget rule (the default "
             "pipeline's 80 minutes are spent), its summary committed for the perturb stage"),
        deps=(L.VALIDITY_V2,
              L.VALIDITY_V2_CASES,
              L.CITATIONS,
              L.DOCUMENTS,
              L.JUDGMENT_SHEETS,
              L.METADATA,
              L.ADJACENCY,
              L.INDEX,
              L.DENSE,
              L.FACT_INDEX,
              (L.RERANKER, "the domain reranker and its citation groups"),
              L.RERANKER_CHOICE,
              L.LTR,
              (L.HOLDINGS, "the applicability features' holding profiles"),
              L.DISPOSITIVE_GOLD,
              (L.GOLD / "perturbation_labels.jsonl", "the hand labels the label is set against"),
              L.TUNING_CHOICE,
              L.SERVING_CHOICE,
              L.LTR_RULE),
        params=("seed", "perturb.case_chars", "retrieve.rerank_model", "retrieve.rerank_backend",
                "index.threads"),
    ),
    Stage(
        "validity_v3", OPT_IN,
        f"countercase validity-v3 --out {L.VALIDITY_V3_OUT} --metrics {L.metrics('validity_v3')} "
        f"--timing {L.timing('validity_v3')}",
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
