"""Where every stage's inputs and outputs lie: the one place that knows the layout of artefacts.

Paths are relative to the project root (where ``dvc.yaml`` is). The CLI's defaults, the loaders,
the notebooks and the paper read them from here; ``tests/test_layout.py`` checks that ``dvc.yaml``
names the same paths, stage by stage (:data:`STAGE_OUTPUTS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# raw data, embedded in the project (immutable; data/README.md)
RAW = Path("data/raw")
AILA = RAW / "aila2019"
AILA_CASEDOCS = AILA / "Object_casedocs.tar.gz"
AILA_STATUTES = AILA / "Object_statutes.tar.gz"
AILA_QUERIES = AILA / "Query_doc.txt"
AILA_QRELS_PRECEDENTS = AILA / "relevance_judgments_priorcases.txt"
AILA_QRELS_STATUTES = AILA / "relevance_judgments_statutes.txt"
PDFS = RAW / "pdfs"
STATUTE_TEXTS = RAW / "statutes"
SC_METADATA = RAW / "sc_metadata" / "raw"
NER_DATA = RAW / "ner" / "inlegalner_bio"
RHETORICAL_ROLES = RAW / "rhetorical_roles"
GOLD = Path("data/gold")  # hand-labelled gold sets, each with its labelling rules beside it
DISPOSITIVE_GOLD = GOLD / "dispositive_facts.jsonl"
HOLDING_GOLD = GOLD / "holding_profiles.jsonl"  # provisions decided, per sampled judgment
PERTURBATION_LABELS = GOLD / "perturbation_labels.jsonl"  # hand labels of the LLM check's sample
LEGAL_AUDIT = GOLD / "legal_audit"  # issue 41: samples of root perturbations and their labels
LLM_CALIBRATION = GOLD / "llm_calibration"  # issue 41: the LLM check's labelled candidates
NUMBER_ROLES_SAMPLE = GOLD / "number_roles_sample.jsonl"  # numbers whose roles are labelled
# the labelled samples of number roles: (sample, labels, how it measures the rules)
NUMBER_ROLE_GOLD = (
    (NUMBER_ROLES_SAMPLE, GOLD / "number_roles_labels.jsonl",
     "exploratory: the cues were revised after reading it"),
    (GOLD / "number_roles_sample_2.jsonl", GOLD / "number_roles_labels_2.jsonl",
     "confirmatory: labelled after the cues were frozen"),
)

TASKS = ("precedents", "statutes")  # the two searches: each has its indexes, named after it

# stage outputs
PROCESSED = Path("data/processed")
INGEST = PROCESSED / "ingest"
DOCUMENTS = INGEST / "documents.jsonl"
EXTRACT = PROCESSED / "extract"
CHUNKS = EXTRACT / "chunks.parquet"
METADATA = EXTRACT / "metadata.parquet"
SECTIONS = EXTRACT / "sections.parquet"
STATUTE_TABLE = EXTRACT / "statutes.parquet"
EXTRACT_SUMMARY = EXTRACT / "summary.json"
NER = PROCESSED / "ner"
NER_MODEL = NER / "model"
FACTSHEETS = PROCESSED / "factsheets"
JUDGMENT_SHEETS = FACTSHEETS / "judgments.jsonl"
ADJACENCY = PROCESSED / "adjacency"
SECTION_EDGES = ADJACENCY / "section_edges.parquet"
# what each judgment's holding turns on (stage holdings) and the citation-grounded targets of
# every citation case's root edits (stage targets)
HOLDINGS = PROCESSED / "holdings"
HOLDING_PROFILES = HOLDINGS / "profiles.jsonl"
TARGETS = PROCESSED / "targets"
CASE_TARGETS = TARGETS / "targets.jsonl"
INDEX = PROCESSED / "index"
FACT_INDEX = PROCESSED / "fact_index"  # the judgments' fact sheets as legal-fact tokens
STATUTE_CHUNKS = INDEX / "statutes_chunks.parquet"
STATUTE_SECTIONS = INDEX / "statute_sections.json"  # AILA statute id -> canonical section ids
DENSE = PROCESSED / "dense"
RERANKER = PROCESSED / "reranker"
RERANKER_ONNX = RERANKER / "onnx"
LTR = PROCESSED / "ltr"  # the learned ranker's models (train_ltr), <system>.txt
RERANKER_GROUPS = RERANKER / "groups.jsonl"  # training groups: the resolved citation links
# what a stage keeps between an interruption and its next run: never an output, never in git
INTERIM = Path("data/interim")
RERANKER_RESUME = INTERIM / "train_reranker"
BIENCODER_RESUME = INTERIM / "train_biencoder"
EVALUATE_RESUME = INTERIM / "evaluate"  # the runs an interrupted evaluate had ranked
# the citation collection: corpus judgments that cite others as queries (countercase.datasets)
CITATIONS = PROCESSED / "citations"
BIENCODER = PROCESSED / "biencoder"  # the dense encoder fine-tuned on citation pairs
BIENCODER_MODEL = BIENCODER / "model"
BIENCODER_SPLIT = BIENCODER / "split.json"  # its train and dev queries of the citation tuning half
DENSE_FT = PROCESSED / "dense_ft"  # the chunks embedded by that encoder
TUNING_CHOICE = Path("configs/tuning_choice.yaml")  # what `tune` chose and the rule, before the test
TUNING_FT_CHOICE = Path("configs/tuning_ft_choice.yaml")  # the fine-tuned encoder's weight (tune_ft)
HOLDINGS_CHOICE = Path("configs/holdings_choice.yaml")  # the scorer of provisions decided
SYSTEMS = Path("configs/systems.yaml")  # the registry of retrieval systems, by name
RERANKER_CHOICE = Path("configs/reranker_choice.yaml")  # the reranker on or off (train_reranker)
TREES_CHOICE = Path("configs/trees_choice.yaml")  # the trees' fact weight (perturb)
LTR_RULE = Path("configs/ltr_rule.yaml")  # the learned ranker's rule, written before its code
SERVING_RULE = Path("configs/serving_rule.yaml")  # the served system's rule (issue 58)
PREREGISTRATION = Path("docs/preregistration")  # written and committed before a confirmatory run
VALIDITY_V2 = PREREGISTRATION / "validity_v2.md"
VALIDITY_V2_CASES = PREREGISTRATION / "validity_v2_cases.txt"
VALIDITY_V3 = PREREGISTRATION / "validity_v3.md"  # directional sensitivity on citation targets
VALIDITY_V3_CASES = PREREGISTRATION / "validity_v3_cases.txt"
VALIDITY_V3_OUT = Path("data/processed/validity_v3")
VALIDITY_V2_OUT = Path("data/processed/validity_v2")  # the confirmatory experiment's rows
VALIDITY_V2_RERUN_OUT = Path("data/processed/validity_v2_rerun")  # its cases on this build
LTR_CHOICE = Path("configs/ltr_choice.yaml")  # its models' choices (train_ltr)
SERVING_CHOICE = Path("configs/serving_choice.yaml")  # the route per query kind (train_ltr)
# a user's own judgments searched with --docs: their indexes, one folder per file, outside
# the work tree (built once, read by every later search)
USER_COLLECTIONS = Path.home() / ".cache" / "countercase" / "collections"
EVALUATE = PROCESSED / "evaluate"
CHUNKINGS = PROCESSED / "chunkings"  # the judgments cut again at the variants' chunk sizes
EVALUATE_FT = PROCESSED / "evaluate_ft"  # the opt-in pipeline's conditions (evaluate_ft)
RERANK_LLM = PROCESSED / "rerank_llm"
TREES = PROCESSED / "trees"
CORPUS_TREES = TREES / "corpus"  # trees of corpus query cases, beside the AILA queries' trees
VALIDITY_ROWS = TREES / "validity.csv"  # the validity experiment, one row per edge and condition
LLM_CHECK = PROCESSED / "llm_check"
EXPLANATIONS = PROCESSED / "explanations"  # every tree with its explanations, JSON and Markdown
NOTEBOOKS = PROCESSED / "notebooks"  # the notebooks executed on the pipeline's outputs


@dataclass(frozen=True)
class IndexPaths:
    """Where the stages put what retrieval reads; a user's own collection names its own."""

    index_dir: Path = INDEX
    dense_dir: Path = DENSE
    chunks: Path = CHUNKS
    metadata: Path = METADATA
    fact_index: Path = FACT_INDEX
    holdings: Path = HOLDING_PROFILES  # the applicability features' profiles

    def chunk_table(self, task: str) -> Path:
        return self.chunks if task == "precedents" else self.index_dir / STATUTE_CHUNKS.name


# metrics (reproducible numbers) and timings (wall clock, kept apart)
METRICS = Path("metrics")
TIMING = METRICS / "timing"


def metrics(name: str) -> Path:
    return METRICS / f"{name}.json"


def timing(name: str) -> Path:
    return TIMING / f"{name}.json"


# committed inputs: the local LLM's answers, one recording a stage (countercase.runtime.recording)
RECORDINGS = Path("recordings") / "llm"


def recording(stage: str) -> Path:
    return RECORDINGS / f"{stage}.jsonl.gz"


REGRESSIONS = Path("regressions")  # committed inputs: written only by `countercase regress --update`
NOTEBOOK_SOURCES = Path("notebooks")  # jupytext percent files, the only form committed
QUICKSTART = Path("quickstart")  # `make quickstart`: a first look without the pipeline
PAPER_SOURCE = Path("paper/paper.qmd")
# the render is committed, so the paper can be read without running anything; the manifest
# holds the hash of every input the render read (countercase.report.paper)
PAPER_HTML = Path("paper/paper.html")
PAPER_PDF = Path("paper/paper.pdf")
PAPER_MANIFEST = Path("paper/manifest.json")
# small committed copies of what only the pipeline writes, refreshed by each render where the
# pipeline has run, so a clean clone renders the paper from committed files alone
PAPER_INPUTS = {
    EVALUATE / "aila2019-task1" / "per_query.csv": Path("paper/inputs/task1_per_query.csv"),
    EVALUATE / "aila2019-task2" / "per_query.csv": Path("paper/inputs/task2_per_query.csv"),
    EVALUATE / "citations" / "per_query.csv": Path("paper/inputs/heldout_per_query.csv"),
    EXPLANATIONS / "AILA_Q30.json": Path("paper/inputs/AILA_Q30.json"),
}
PAPER_BIBLIOGRAPHY = Path("paper/references.bib")
TRACK_RESULTS = Path("paper/aila2019_track.yaml")  # the track's best runs, from its overview paper

# the default pipeline (`make repro`) and the opt-in one (`make repro-extended`)
PIPELINE = Path("dvc.yaml")
OPT_IN_PIPELINE = Path("experiments/dvc.yaml")

def part(out: Path, number: int, parts: int) -> Path:
    """Where part ``number`` of ``parts`` of a stage run in parts (:mod:`countercase.dag.stages`)
    writes its share of the stage's data folder ``out``."""
    return out.with_name(f"{out.name}_parts") / f"{number}of{parts}"


# what each DVC stage writes (of both pipelines): ``outs`` (cached data) and ``metrics`` (JSON, not cached)
STAGE_OUTPUTS: dict[str, dict[str, tuple[Path, ...]]] = {
    "ingest": {"outs": (INGEST,), "metrics": (metrics("ingest"), timing("ingest"))},
    "extract": {"outs": (EXTRACT,), "metrics": (timing("extract"),)},
    "extract_eval": {"outs": (), "metrics": (metrics("extraction"),)},
    "train_ner": {"outs": (NER_MODEL,), "metrics": (metrics("ner"), timing("ner"))},
    "factsheets": {"outs": (FACTSHEETS,), "metrics": (metrics("factsheets"), timing("factsheets"))},
    "adjacency": {"outs": (ADJACENCY,), "metrics": (metrics("adjacency"),)},
    "index": {"outs": (INDEX,), "metrics": (timing("index"),)},
    "index_facts": {"outs": (FACT_INDEX,), "metrics": (metrics("index_facts"),)},
    "embed": {"outs": (DENSE,), "metrics": (timing("embed"),)},
    "latency": {"outs": (), "metrics": (metrics("latency"),)},
    "citations": {"outs": (CITATIONS,), "metrics": (metrics("citations"),)},
    "holdings": {"outs": (HOLDINGS,), "metrics": (metrics("holdings"),)},
    "targets": {"outs": (TARGETS,), "metrics": (metrics("targets"),)},
    "tune": {"outs": (metrics("tuning"), TUNING_CHOICE), "metrics": ()},
    "train_reranker": {"outs": (RERANKER, RERANKER_CHOICE),
                       "metrics": (metrics("reranker"), timing("reranker"))},
    "train_ltr": {"outs": (LTR, LTR_CHOICE, SERVING_CHOICE),
                  "metrics": (metrics("ltr"), timing("ltr"))},
    "train_biencoder": {"outs": (BIENCODER,), "metrics": (metrics("biencoder"),)},
    "embed_ft": {"outs": (DENSE_FT,), "metrics": (timing("embed_ft"),)},
    "validity_v2_rerun": {"outs": (VALIDITY_V2_RERUN_OUT,),
                          "metrics": (metrics("validity_v2_rerun"), timing("validity_v2_rerun"))},
    "validity_v3": {"outs": (VALIDITY_V3_OUT,),
                    "metrics": (metrics("validity_v3"), timing("validity_v3"))},
    "tune_ft": {"outs": (metrics("tuning_ft"), TUNING_FT_CHOICE), "metrics": ()},
    "chunkings": {"outs": (CHUNKINGS,), "metrics": ()},
    "evaluate": {"outs": (EVALUATE, metrics("evaluation")),
                 "metrics": (metrics("retrieval"), timing("evaluate"))},
    "regress": {"outs": (), "metrics": (metrics("regress"),)},
    "leakage": {"outs": (), "metrics": (metrics("leakage"),)},
    "evaluate_ft": {"outs": (EVALUATE_FT, metrics("evaluation_ft")),
                    "metrics": (metrics("retrieval_ft"), timing("evaluate_ft"))},
    "regress_ft": {"outs": (), "metrics": (metrics("regress_ft"),)},
    "perturb": {"outs": (TREES, TREES_CHOICE),
                "metrics": (metrics("counterfactual"), timing("perturb"))},
    "llm_check": {"outs": (LLM_CHECK,), "metrics": (metrics("llm_check"), timing("llm_check"))},
    "explain": {"outs": (EXPLANATIONS,), "metrics": (metrics("explanations"), timing("explain"))},
    "topology": {"outs": (), "metrics": (metrics("topology"),)},
    "rerank_llm": {"outs": (RERANK_LLM,), "metrics": (metrics("rerank_llm"),)},
    "llm_replay": {"outs": (), "metrics": (metrics("llm_replay"),)},
    "explore_bench": {"outs": (), "metrics": (timing("explorer"),)},
    "notebooks": {"outs": (NOTEBOOKS,), "metrics": (timing("notebooks"),)},
    "results": {"outs": (), "metrics": (metrics("results"),)},
    "paper": {"outs": (PAPER_HTML, PAPER_PDF, PAPER_MANIFEST, *PAPER_INPUTS.values()),
              "metrics": ()},
}
