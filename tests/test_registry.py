"""The registry of systems (configs/systems.yaml): every system by name, each with its expected
scores; search and evaluate take a system by its name and refuse one they cannot run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from countercase.config import ConfigError, Params
from countercase.retrieve.registry import (BY_NAME, DEFAULT, OPT_IN, SYSTEMS, read_systems,
                                           served_params, system)

ROOT = Path(__file__).resolve().parents[1]
COLLECTIONS = (("aila2019-task1", "precedents"), ("aila2019-task2", "statutes"))


def test_every_system_the_pipelines_score_has_its_expected_scores():
    assert {s.name for s in DEFAULT} | {s.name for s in OPT_IN} == set(BY_NAME)
    lacking = [f"{collection}/{s.name}" for s in SYSTEMS
               for collection in [c for c, task in COLLECTIONS if task in s.tasks]
               + (["citations"] if s.heldout else [])
               if not (ROOT / "regressions" / collection / f"{s.name}.yaml").is_file()]
    assert not lacking, f"systems scored without a regression file: {lacking}"


def test_the_served_and_the_trees_systems_are_registered_pipelines():
    params = Params()
    assert system(params.retrieve.system).pipeline and system(params.perturb.system).pipeline
    assert served_params(params) == params.retrieve  # full: the configured pipeline as it is
    bm25 = system("bm25").served(params.retrieve)
    assert (bm25.steps, bm25.bm25_depth) == (("bm25",), params.retrieve.bm25_depth)


@pytest.mark.parametrize("body, named", [
    ("  x:\n    description: d\n    levle: chunks\n", "unknown key"),
    ("  x:\n    description: d\n    level: lever\n", "level 'lever'"),
    ("  x:\n    description: d\n    level: passages\n", "sets pool, k1, b"),
    ("  x:\n    description: d\n    level: docs\n    k1: 1\n    b: 1\n    pool: max\n",
     "pool belong to no docs system"),
    ("  x:\n    description: d\n    level: fusion\n    fuse: {x: 1.0}\n", "two or more"),
    ("  x:\n    description: d\n    level: prior\n    of: y\n    weight: 1\n",
     "refers to no system 'y'"),
    ("  x:\n    description: d\n    level: fusion\n    fuse: {x: 1.0, z: 1.0}\n    reference: z\n"
     "  z:\n    description: d\n    level: prior\n    of: x\n    weight: 1\n    reference: z\n",
     "composed of itself"),
    ("  x:\n    description: d\n    level: docs\n    k1: {choice: tune.docs.k1}\n    b: 1\n",
     "FILE one of tuning, reranker, trees, ltr, serving, tuning_ft"),
    ("  x:\n    description: d\n    level: docs\n    steps: [bm25]\n"
     "    k1: 1\n    b: 1\n", "only a chunks system lists pipeline steps"),
    ("  x:\n    description: d\n", "a chunks system lists its steps"),
    ("  x:\n    description: d\n    steps: [bm26]\n", "step 'bm26' is none of"),
    ("  x:\n    description: d\n    steps: [mmr]\n", "bm25, dense or both"),
    ("  x:\n    description: d\n    steps: [bm25, {fusion: {fusion_weights: 3}}]\n",
     "fusion_weights"),
    ("  x:\n    description: d\n    steps: [{bm25: {mmr_tasks: []}}]\n",
     "step bm25 has no setting mmr_tasks"),
    ("  x:\n    description: d\n    steps: [bm25, {rerank: {when: true}}]\n",
     "when is a chosen value"),
    ("  x:\n    description: d\n    steps: [bm25, {rerank: {when: {choice: rerank.on}}}]\n",
     "FILE one of"),
    ("  x:\n    description: d\n    steps: [bm25]\n    needs: [statutes]\n", "needs"),
    ("  x:\n    description: d\n    steps: [bm25]\n    reference: y\n",
     "refers to no system 'y'"),
    ("  x:\n    level: docs\n", "no description"),
])
def test_a_bad_entry_names_its_line_its_system_and_what_is_wrong(tmp_path, body, named):
    path = tmp_path / "systems.yaml"
    path.write_text("systems:\n" + body)
    with pytest.raises(ConfigError, match=named) as error:
        read_systems(path)
    assert f"{path}:2: system 'x'" in str(error.value)  # the file, x's line, the system


def test_an_unknown_system_lists_the_registry(run_cli):
    code, _, err = run_cli("search", "a dying declaration", "--system", "ful")
    assert code == 2 and "no system 'ful'" in err and "full_docs_prior" in err
    code, _, err = run_cli("evaluate", "--system", "ful")
    assert code == 2 and "unknown system(s) ful" in err


def test_search_refuses_a_filter_a_whole_judgment_system_cannot_apply(run_cli):
    code, _, err = run_cli("search", "a dying declaration", "--system", "bm25_docs",
                           "--year-from", "1990")
    assert code == 2 and "bm25_docs takes no filter but --year-to" in err


def test_a_system_of_one_task_is_refused_on_the_other(run_cli):
    code, _, err = run_cli("search", "a dying declaration", "--system", "precedent_bridge")
    assert code == 2 and "ranks statutes only, not precedents" in err


def test_evaluate_names_every_system_a_trec_collection_cannot_run(run_cli, tmp_path):
    """Asked for by name, a system the collection cannot run is an exit 2 naming it and why,
    before anything is indexed: the citation prior needs citations and dates, the fact channel
    fact sheets, and the statute bridge ranks statutes."""
    docs, topics, qrels = tmp_path / "docs.jsonl", tmp_path / "topics.tsv", tmp_path / "qrels"
    docs.write_text(json.dumps({"id": "d1", "contents": "a dying declaration"}) + "\n")
    topics.write_text("q1\tdying declaration\n")
    qrels.write_text("q1 0 d1 1\n")
    code, _, err = run_cli("evaluate", "--docs", str(docs), "--topics", str(topics),
                           "--qrels", str(qrels), "--out", str(tmp_path / "out"),
                           "--system", "bm25", "--system", "full_docs_prior",
                           "--system", "fact_channel", "--system", "precedent_bridge")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "full_docs_prior: needs citations, dates" in err
    assert "fact_channel: needs fact_sheets" in err
    assert "precedent_bridge: ranks statutes only" in err and "bm25:" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name, named", [("ful", "no system 'ful'"),
                                         ("bm25_docs", "no pipeline over the built indexes")])
def test_a_tree_searches_a_registered_pipeline_only(run_cli, tmp_path, name, named):
    edges = tmp_path / "edges.parquet"
    edges.write_bytes(b"")  # never read: the system is refused first
    code, _, err = run_cli("tree", "--text", "The accused, aged 17, ...", "--system", name,
                           "--edges", str(edges), "--out", str(tmp_path / "tree.json"))
    assert code == 2 and named in err and not (tmp_path / "tree.json").exists()


def test_a_workspace_searches_the_system_it_names():
    from countercase.case import Workspace
    from countercase.retrieve.registry import tree_params

    assert not tree_params(Workspace(ROOT).params).running("rerank")  # the trees': no_rerank
    assert not tree_params(Workspace(ROOT, "bm25").params).running("dense")
    with pytest.raises(ConfigError, match="no system 'ful'"):
        Workspace(ROOT, "ful").params  # noqa: B018


def test_a_bridge_ranks_the_statutes_its_precedent_system_cites(indexed_corpus, aila_files):
    from countercase.retrieve.compose import Composer, why_not
    from countercase.retrieve.load import bridge_inputs
    from countercase.retrieve.statute_bridge import StatuteBridge

    paths, _, _ = indexed_corpus
    base = Params().retrieve
    texts = aila_files.casedocs(["C2", "C7"])
    topics = {f"Q{d}": text[1000:2500] for d, text in texts.items()}
    # ltr replaced by whole-judgment BM25: the bridge reads whatever its component ranks
    run = Composer("statutes", paths, base, 20, 50, exclude={"QC2": ["C2"]}).system(
        "ltr_bridge", {"ltr": "bm25_docs"})(topics)
    precedents = Composer("precedents", paths, base, 20, 50).system("bm25_docs")(topics)
    bridge = StatuteBridge(*bridge_inputs(paths), base.bridge_depth, base.bridge_rank_offset)
    assert run == {"QC2": bridge.rank([d for d, _ in precedents["QC2"]], ["C2"])[:20],
                   "QC7": bridge.rank([d for d, _ in precedents["QC7"]])[:20]}
    assert any(run.values()) and all(s.startswith("S") for r in run.values() for s, _ in r)
    why = why_not([BY_NAME["ltr_bridge"]], "statutes", base, supplied=frozenset())
    assert why["ltr_bridge"].startswith("needs citations, dates, fact_sheets")
    assert why_not([BY_NAME["ltr_bridge"]], "precedents", base) == {}  # ranks statutes only


def test_a_system_added_by_one_entry_is_built_by_the_composer(tmp_path, project):
    """The README's recipe (issue 60): one entry in the registry's format, and the composer
    that builds every system builds and ranks it; an entry naming no system is refused."""
    import yaml

    from countercase import layout
    from countercase.case import Workspace
    from countercase.config import ConfigError
    from countercase.datasets.aila import read_queries
    from countercase.evaluate.run import composer
    from countercase.retrieve.choices import Choices
    from countercase.retrieve.registry import SYSTEMS_FILE, read_systems

    entries = yaml.safe_load(SYSTEMS_FILE.read_text(encoding="utf-8"))
    entries["systems"]["toy"] = {"description": "a toy fusion", "level": "fusion",
                                 "fuse": {"bm25": 1.0, "bm25_docs": 1.0},
                                 "tasks": ["precedents"]}
    # a chunk pipeline is the steps it names: BM25 alone, fused at another k, orders as bm25
    entries["systems"]["toy_pipeline"] = {"description": "chunk BM25 at another RRF k",
                                          "steps": ["bm25", {"fusion": {"rrf_k": 30}}]}
    file = tmp_path / "systems.yaml"
    file.write_text(yaml.safe_dump(entries), encoding="utf-8")
    registry = {spec.name: spec for spec in read_systems(file)}
    workspace = Workspace(project)
    params = workspace.params
    build = composer("precedents", workspace.index_paths, params.retrieve, params.evaluate,
                     Choices(), registry=registry)
    topics = read_queries(workspace.path(layout.AILA_QUERIES))
    qid = next(iter(topics))
    toy = build.system("toy")({qid: topics[qid]})[qid]
    bm25 = build.system("bm25")({qid: topics[qid]})[qid]
    docs = build.system("bm25_docs")({qid: topics[qid]})[qid]
    assert toy and {d for d, _ in toy} <= {d for d, _ in bm25} | {d for d, _ in docs}
    pipeline = build.system("toy_pipeline")({qid: topics[qid]})[qid]
    assert [d for d, _ in pipeline] == [d for d, _ in bm25]
    assert [h.doc_id for h in build.ranker("toy").search(topics[qid], k=5).documents] \
        == [d for d, _ in toy[:5]]  # searched as it ranks, each at a passage of its own
    with pytest.raises(ConfigError, match="no system 'toy' in the registry"):
        composer("precedents", workspace.index_paths, params.retrieve, params.evaluate,
                 Choices()).system("toy")
    entries["systems"]["toy"]["fuse"] = {"bm25": 1.0, "nope": 1.0}
    file.write_text(yaml.safe_dump(entries), encoding="utf-8")
    with pytest.raises(ConfigError, match="system 'toy' refers to no system 'nope'"):
        read_systems(file)


@pytest.mark.parametrize("text", ["", "- a\n- b\n", "systems:\n  - x\n", "systems: {unclosed\n"])
def test_a_registry_that_is_no_mapping_of_systems_is_named(tmp_path, text):
    path = tmp_path / "systems.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"no mapping 'systems'|cannot read the registry"):
        read_systems(path)


def test_every_system_is_one_ranker_that_ranks_topics_and_searches_a_query(indexed_corpus,
                                                                            aila_files):
    """Issue 60: the composer builds every system as one shape, ``rank(topics) -> run`` and
    ``search(query, filters, k) -> hits``: a system that ranks whole judgments searches by
    ranking the one query, each judgment at one of its own passages, in the order its ranking
    gives; a filter it cannot honour is an error that names it; its limit it honours."""
    from countercase.retrieve.compose import Composer
    from countercase.retrieve.filters import FilterError, SearchFilter

    paths, _, _ = indexed_corpus
    base = Params().retrieve.model_copy(update={"steps": ("bm25", "bridge"),
                                                "fact_weight": 0.0})
    build = Composer("precedents", paths, base, 20, 50)
    text = aila_files.casedocs(["C7"])["C7"][1000:2500]
    import pandas as pd

    chunks = pd.read_parquet(paths.chunk_table("precedents"), columns=["chunk_id", "doc_id"])
    doc_of = dict(zip(chunks["chunk_id"], chunks["doc_id"]))
    for name in ("bm25_docs", "bm25"):
        ranker = build.ranker(name)
        run = ranker({"q": text})["q"]
        hits = ranker.search(text, k=5).documents
        assert hits and [h.rank for h in hits] == list(range(1, len(hits) + 1)), name
        if not BY_NAME[name].pipeline:
            assert [h.doc_id for h in hits] == [d for d, _ in run[:5]], name
            assert all(ranker.ranking(text, k=5)[i][0] == h.doc_id for i, h in enumerate(hits))
        assert all(doc_of[h.chunk_id] == h.doc_id for h in hits), name  # its own passage
        kept = ranker.search(text, SearchFilter(exclude_doc_ids=frozenset({hits[0].doc_id})),
                             k=5).documents
        assert hits[0].doc_id not in {h.doc_id for h in kept}, name
    with pytest.raises(FilterError, match="system bm25_docs .*act_sections"):
        build.ranker("bm25_docs").search(text, SearchFilter(act_sections=frozenset({"IPC-302"})))
