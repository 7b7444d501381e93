"""The evaluation harness: measures and tests against hand-computed cases, the AILA datasets by
id, one Experiment, and a TREC collection end to end on real statutes and AILA queries."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from countercase import datasets
from countercase.datasets.aila import TEST, TUNING
from countercase.datasets.trec import QrelsError, TopicsError, read_qrels, read_topics
from countercase.experiment import Experiment, ExperimentError, ranked
from countercase.experiment.measures import aggregate, per_query
from countercase.experiment.significance import holm, paired
from countercase.index.run import statute_documents


def test_measures_on_a_hand_computed_ranking():
    qrels = {"q1": {"a": 1, "b": 1, "c": 0, "d": 0}, "q2": {"x": 1}}
    run = {"q1": [("a", 3.0), ("c", 2.0), ("b", 1.0)]}  # q2 is not answered
    table = per_query(qrels, run, ("q1", "q2"))
    q1 = table.loc["q1"]
    assert q1["MAP"] == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert q1["P@10"] == pytest.approx(0.2) and q1["RR"] == 1.0 and q1["R@5"] == 1.0
    # bpref: a is above no judged non-relevant, b is above one of min(R=2, N=2) = 2
    assert q1["BPREF"] == pytest.approx((1 + (1 - 1 / 2)) / 2)
    assert (table.loc["q2"] == 0).all()
    assert aggregate(table)["MAP"] == pytest.approx(round(q1["MAP"] / 2, 4))


def test_holm_and_paired_tests():
    adjusted = holm({"a": 0.01, "b": 0.04, "c": 0.03})
    assert adjusted == pytest.approx({"a": 0.03, "c": 0.06, "b": 0.06})
    same = paired(np.array([0.1, 0.2, 0.3]), np.array([0.1, 0.2, 0.3]))
    assert same["t_p"] is None and same["wilcoxon_p"] is None and same["mean_diff"] == 0
    better = paired(np.linspace(0.2, 0.9, 20), np.linspace(0.1, 0.8, 20) - 0.01 * np.arange(20) % 3)
    assert better["mean_diff"] > 0 and better["t_p"] < 0.01 and better["cohens_d"] > 0


def test_bad_qrels_and_topics_name_the_line(tmp_path):
    (tmp_path / "q.txt").write_text("AILA_Q1 Q0 S1 1\nAILA_Q1 S2 1\n")
    with pytest.raises(QrelsError, match=r"q\.txt:2"):
        read_qrels(tmp_path / "q.txt")
    (tmp_path / "t.tsv").write_text("q1\tfacts\nq2 no tab here\n")
    with pytest.raises(TopicsError, match=r"t\.tsv:2"):
        read_topics(tmp_path / "t.tsv")


def test_aila_datasets_by_id_and_the_statute_without_text(aila_files):
    task1 = aila_files.dataset("aila2019/task1")
    test = aila_files.dataset("aila2019/task1/test")
    tuning = aila_files.dataset("aila2019/task1/tuning")
    assert len(task1.queries) == 50 and test.qids == TEST and tuning.qids == TUNING
    assert test.collection == task1.collection == "aila2019-task1" and test.task == "precedents"
    assert sum(len(j) for j in task1.qrels.values()) == 50 * 2914  # every document judged
    assert set(test.qrels) == set(TEST) and test.queries["AILA_Q11"] == task1.queries["AILA_Q11"]
    docs = dict(task1.docs_iter())
    assert len(docs) == 2914 and next(iter(docs)) == "C1"
    task2 = aila_files.dataset("aila2019/task2/test")
    statutes = dict(task2.docs_iter())
    assert len(statutes) == 197 and statutes["S1"].startswith("Power of High Courts")
    assert set(statutes) == {d.doc_id for d in statute_documents(
        aila_files.dir / "Object_statutes.tar.gz")}
    assert datasets.unretrievable(task2.qrels, set(statutes)) == {
        "S58": ["AILA_Q33", "AILA_Q49", "AILA_Q50"]}  # AILA_Q2 is a tuning query


def test_a_changed_or_unknown_dataset_is_an_error_naming_it(tmp_path, aila_files):
    with pytest.raises(datasets.CollectionError, match="unknown dataset 'aila2019/task3'"):
        datasets.load("aila2019/task3", aila_files.dir)
    for name in ("Query_doc.txt", "relevance_judgments_priorcases.txt"):
        (tmp_path / name).write_bytes((aila_files.dir / name).read_bytes())
    with (tmp_path / "relevance_judgments_priorcases.txt").open("a") as handle:
        handle.write("AILA_Q1 Q0 C9999 1\n")
    with pytest.raises(datasets.CollectionError, match="relevance_judgments_priorcases.txt has "
                                                       "changed"):
        datasets.load("aila2019/task1/test", tmp_path)
    with pytest.raises(datasets.CollectionError, match="not found"):
        datasets.load("aila2019/task2", tmp_path)


def test_an_experiment_scores_and_tests_every_system_against_its_baseline(aila_files,
                                                                          tmp_path):
    dataset = aila_files.dataset("aila2019/task1/test")
    relevant = {q: [d for d, r in dataset.qrels[q].items() if r > 0] for q in dataset.qids}
    calls = []

    def oracle(topics):
        calls.append(len(topics))
        return {q: ranked(relevant[q]) for q in topics}

    oracle.cache_key = "oracle v1"
    systems = {"oracle": oracle, "nothing": lambda topics: {q: [] for q in topics},
               "first": lambda topics: {q: ranked(relevant[q][:1]) for q in topics}}
    result = Experiment(systems, dataset, baselines=["nothing", "absent"], cache_dir=tmp_path,
                        out=tmp_path / "out")
    scores = result.aggregate()
    assert scores["oracle"]["MAP"] == 1.0 and scores["nothing"]["MAP"] == 0.0
    tests = result.significance["MAP"]["nothing"]
    assert set(result.significance["MAP"]) == {"nothing"}  # an absent baseline is skipped
    assert tests["oracle"]["t_p"] is None  # a constant difference: no t-test to make
    assert 0 < scores["first"]["MAP"] < 1 and tests["first"]["mean_diff"] > 0
    assert tests["first"]["t_p"] < 1e-3 and tests["first"]["t_p_holm"] >= tests["first"]["t_p"]
    assert set(pd.read_csv(tmp_path / "out/per_query.csv")["condition"]) == set(systems)
    assert len(pd.read_csv(tmp_path / "out/oracle.run", sep=" ", header=None)) == sum(
        len(v) for v in relevant.values())
    again = Experiment({"oracle": oracle}, dataset, cache_dir=tmp_path)
    assert calls == [40] and again.aggregate()["oracle"] == scores["oracle"]  # read from cache
    with pytest.raises(ExperimentError, match="unknown measure"):
        Experiment(systems, dataset, measures=["MAP@7"])


@pytest.fixture(scope="module")
def trec_collection(tmp_path_factory, aila_files):
    """Real statutes as documents, four real AILA queries as topics, their real qrels."""
    root = tmp_path_factory.mktemp("trec")
    qids = ["AILA_Q1", "AILA_Q2", "AILA_Q3", "AILA_Q4"]
    qrels = aila_files.qrels("statutes")
    keep = {f"S{i}" for i in range(1, 31)} | {d for q in qids for d, r in qrels[q].items() if r}
    docs = [d for d in statute_documents(aila_files.dir / "Object_statutes.tar.gz")
            if d.doc_id in keep]
    lines = [json.dumps({"id": d.doc_id, "contents": d.text}) for d in docs]
    lines.insert(3, "{not json")  # a damaged line: reported, the rest goes on
    (root / "docs.jsonl").write_text("\n".join(lines) + "\n")
    queries = aila_files.queries()
    (root / "topics.tsv").write_text("".join(f"{q}\t{queries[q]}\n" for q in qids))
    (root / "qrels.txt").write_text("".join(f"{q} 0 {d} {r}\n" for q in qids
                                            for d, r in qrels[q].items() if d in keep))
    return root, len(docs)


def test_a_trec_collection_runs_through_the_same_command(trec_collection, run_cli):
    root, n_docs = trec_collection
    out = root / "out"
    code, _, err = run_cli("evaluate", "--docs", str(root / "docs.jsonl"),
                     "--topics", str(root / "topics.tsv"), "--qrels", str(root / "qrels.txt"),
                     "--out", str(out), "--metrics", str(root / "scores.json"),
                     "--condition", "bm25_docs", "--condition", "hybrid_rrf")
    assert code == 0, err
    failures = [json.loads(line) for line in (out / "index/failures.jsonl").read_text().splitlines()]
    assert len(failures) == 1 and failures[0]["source_path"].endswith("docs.jsonl:4")
    scores = json.loads((root / "scores.json").read_text())["topics"]
    assert set(scores) == {"bm25_docs", "hybrid_rrf"} and 0 < scores["hybrid_rrf"]["MAP"] <= 1
    run = pd.read_csv(out / "topics/bm25_docs.run", sep=" ", header=None)
    assert set(run[0]) == {"AILA_Q1", "AILA_Q2", "AILA_Q3", "AILA_Q4"}
    assert run.groupby(0).size().max() <= n_docs
    table = pd.read_csv(out / "topics/per_query.csv")
    assert len(table) == 2 * 4 and {"condition", "qid", "MAP", "R@20"} <= set(table.columns)
    same = datasets.load(f"trec:{root}")  # the folder as a dataset id: the same collection
    assert same.qids == tuple(qids_of(root)) and same.qrels == read_qrels(root / "qrels.txt")


def test_the_served_system_runs_on_a_plain_trec_folder(trec_collection, run_cli, tmp_path):
    """Issue 58: a folder of documents, topics and qrels only (no citations, dates or fact
    sheets) runs the served system end to end: each kind of query falls back to chunk BM25 where
    its chosen system needs what the folder lacks, and the scores say what served."""
    root, _ = trec_collection
    code, _, err = run_cli("evaluate", "--docs", str(root / "docs.jsonl"),
                           "--topics", str(root / "topics.tsv"), "--qrels",
                           str(root / "qrels.txt"), "--out", str(tmp_path / "out"), "--metrics",
                           str(tmp_path / "scores.json"), "--condition", "served",
                           "--condition", "bm25")
    assert code == 0, err
    scores = json.loads((tmp_path / "scores.json").read_text())["topics"]
    served = scores["served"]
    assert (served["system"], served["kind"]) == ("bm25", "description")
    assert served["MAP"] == scores["bm25"]["MAP"] and 0 < served["MAP"] <= 1


def test_a_folder_of_judgments_texts_is_served_by_the_first_system_it_can_run(
        trec_collection, run_cli, tmp_path):
    """Issue 58: topics that are judgments' texts (--kind judgment) go to the judgment route;
    a folder that lacks the citations, dates and sheets its chosen learned system needs is
    served the next system of the route's order that it can run (the text-only learned ranker
    where the serving rule admitted it and its model is built), else chunk BM25."""
    import yaml

    from countercase import layout
    from countercase.retrieve.registry import BY_NAME

    root, _ = trec_collection
    code, _, err = run_cli("evaluate", "--docs", str(root / "docs.jsonl"),
                           "--topics", str(root / "topics.tsv"), "--qrels",
                           str(root / "qrels.txt"), "--kind", "judgment", "--out",
                           str(tmp_path / "out"), "--metrics", str(tmp_path / "scores.json"),
                           "--condition", "served", "--condition", "bm25")
    assert code == 0, err
    served = json.loads((tmp_path / "scores.json").read_text())["topics"]["served"]
    order = yaml.safe_load(layout.SERVING_CHOICE.read_text())["order"]["judgment"]
    runs = [name for name in order if not BY_NAME[name].needs and (
        BY_NAME[name].level != "ltr"
        or (layout.LTR / f"{BY_NAME[name].step['model']}.txt").is_file())]
    assert (served["system"], served["kind"]) == ((runs or ["bm25"])[0], "judgment")
    assert 0 < served["MAP"] <= 1


def test_search_ranks_a_users_own_judgments(trec_collection, run_cli, tmp_path):
    """Issue 58: countercase search --docs serves a JSONL of the user's own documents, indexed
    once (a second search reads the same folder back), each hit a readable row naming the
    system that ranked it; what a folder cannot honour is refused with its reason."""
    root, _ = trec_collection
    args = ["search", "punishment for murder", "--docs", str(root / "docs.jsonl"),
            "--collections", str(tmp_path / "built"), "--json", "--k", "3"]
    code, out, err = run_cli(*args)
    assert code == 0, err
    rows = json.loads(out)
    assert len(rows) == 3 and {row["system"] for row in rows} == {"bm25"}  # a description
    assert all(row["passage"] and row["why"] for row in rows)
    built = sorted((tmp_path / "built").iterdir())
    assert len(built) == 1 and (built[0] / "built.json").is_file()
    code, again, err = run_cli(*args)
    assert code == 0 and json.loads(again) == rows
    assert sorted((tmp_path / "built").iterdir()) == built
    code, _, err = run_cli("search", "murder", "--docs", str(root / "docs.jsonl"),
                           "--year-to", "2000")
    assert code == 2 and "carry no metadata" in err
    code, _, err = run_cli("search", "murder", "--docs", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "missing.jsonl" in err


def test_conditions_that_read_no_vector_embed_nothing(trec_collection, run_cli, tmp_path):
    from countercase.config import load_params
    from countercase.retrieve.registry import BY_NAME

    root, _ = trec_collection
    params = load_params()
    reads = {name: BY_NAME[name].reads_vectors(params.retrieve, params.evaluate.chunk_depth,
                                                "precedents")
             for name in ("bm25", "bm25_docs", "bm25_chunks128", "dense", "hybrid_rrf")}
    assert reads == {"bm25": False, "bm25_docs": False, "bm25_chunks128": False, "dense": True,
                     "hybrid_rrf": True}
    out = tmp_path / "out"
    code, _, err = run_cli("evaluate", "--docs", str(root / "docs.jsonl"),
                           "--topics", str(root / "topics.tsv"), "--qrels",
                           str(root / "qrels.txt"), "--out", str(out), "--metrics",
                           str(tmp_path / "scores.json"), "--condition", "bm25",
                           "--condition", "bm25_docs")
    assert code == 0, err
    assert (out / "index/index/precedents_chunks").is_dir()
    assert not (out / "index/dense").exists()
    scores = json.loads((tmp_path / "scores.json").read_text())["topics"]
    assert set(scores) == {"bm25", "bm25_docs"} and 0 < scores["bm25"]["MAP"] <= 1


def test_an_interrupted_evaluate_reads_back_the_runs_it_had_ranked(trec_collection, run_cli,
                                                                    monkeypatch, tmp_path):
    from countercase.retrieve.compose import Composer

    root, _ = trec_collection
    resume = tmp_path / "resume"
    args = ["evaluate", "--docs", str(root / "docs.jsonl"), "--topics", str(root / "topics.tsv"),
            "--qrels", str(root / "qrels.txt"), "--condition", "bm25_docs", "--condition",
            "hybrid_rrf", "--resume-dir", str(resume)]
    whole = tmp_path / "whole"
    code, _, err = run_cli(*args, "--out", str(whole), "--metrics", str(whole / "scores.json"),
                           "--summary", str(whole / "notes.json"))
    assert code == 0, err
    assert not resume.exists()  # cleared when the stage is done
    built = Composer.system

    def interrupted(self, name, *rest, **kw):  # the second condition is cut off while ranking
        system = built(self, name, *rest, **kw)
        if name != "hybrid_rrf":
            return system
        def rank(topics):
            raise KeyboardInterrupt
        return rank

    monkeypatch.setattr(Composer, "system", interrupted)
    cut = tmp_path / "cut"
    code, _, err = run_cli(*args, "--out", str(cut))
    assert code == 130, err
    assert [p.name.split("-")[0] for p in (resume / "topics").glob("*.json")] == ["bm25_docs"]
    monkeypatch.setattr(Composer, "system", built)
    code, _, err = run_cli(*args, "--out", str(cut), "--metrics", str(cut / "scores.json"),
                           "--summary", str(cut / "notes.json"))
    assert code == 0, err
    notes = json.loads((cut / "notes.json").read_text())["topics"]
    assert notes["read_back_from_an_interrupted_run"] == ["bm25_docs"]
    # the ranking seconds of the run read back count as the earlier run's (stage_times); an
    # uninterrupted run has none
    assert notes["seconds_in_earlier_runs"] > 0
    assert json.loads((whole / "notes.json").read_text())["topics"][
        "seconds_in_earlier_runs"] == 0
    assert json.loads((cut / "scores.json").read_text()) == \
           json.loads((whole / "scores.json").read_text())
    for name in ("bm25_docs.run", "hybrid_rrf.run", "per_query.csv"):
        assert (cut / "topics" / name).read_bytes() == (whole / "topics" / name).read_bytes()


def test_evaluate_rejects_bad_arguments(trec_collection, run_cli):
    root, _ = trec_collection
    code, _, err = run_cli("evaluate", "--condition", "bm26")
    assert code == 2 and "unknown system(s) bm26" in err
    code, _, err = run_cli("evaluate", "--docs", str(root / "docs.jsonl"))
    assert code == 2 and "--docs, --topics and --qrels together" in err
    code, _, err = run_cli("evaluate", "--kind", "brief")
    assert code == 2 and "--kind brief: use description or judgment" in err
    code, _, err = run_cli("evaluate", "--kind", "judgment", "--collection", "citations")
    assert code == 2 and "--kind is what a TREC collection's topics are" in err


def qids_of(root):
    return [line.split("\t")[0] for line in (root / "topics.tsv").read_text().splitlines()]


def test_a_condition_of_another_encoder_waits_for_its_embeddings(tmp_path, monkeypatch, caplog):
    from countercase.config import RetrieveParams
    from countercase.retrieve.registry import BY_NAME
    from countercase.evaluate.run import runnable

    monkeypatch.chdir(tmp_path)  # no data/processed/dense_ft here
    chosen = [BY_NAME["bm25"], BY_NAME["dense_ft"], BY_NAME["hybrid_ft"]]
    kept, _ = runnable(chosen, "precedents", RetrieveParams(), None)
    assert [c.name for c in kept] == ["bm25"]
    assert all(f"system {name} skipped: no embeddings of the fine-tuned encoder" in caplog.text
               for name in ("dense_ft", "hybrid_ft"))
    meta = tmp_path / "data/processed/dense_ft/precedents/meta.json"
    meta.parent.mkdir(parents=True)
    meta.write_text("{}")
    kept, _ = runnable(chosen, "precedents", RetrieveParams(), None)
    assert [c.name for c in kept] == ["bm25", "dense_ft", "hybrid_ft"]
    assert runnable(chosen, "statutes", RetrieveParams(), None)[0] == [BY_NAME["bm25"]]


def test_the_fine_tuned_encoders_systems_wait_for_a_weight_above_0(tmp_path, monkeypatch, caplog):
    from countercase.config import RetrieveParams
    from countercase.evaluate.run import runnable
    from countercase.retrieve.choices import Choices
    from countercase.retrieve.registry import BY_NAME

    monkeypatch.chdir(tmp_path)
    meta = tmp_path / "data/processed/dense_ft/precedents/meta.json"
    meta.parent.mkdir(parents=True)
    meta.write_text("{}")
    choice, ft = tmp_path / "choice.yaml", tmp_path / "ft.yaml"
    choice.write_text("tuned_system: full_docs\nprecedents:\n  docs: {k1: 1.2, b: 0.4}\n"
                      "  docs_fusion: {weight: 1.0}\n", encoding="utf-8")
    choices = Choices({"tuning": choice, "tuning_ft": ft})
    chosen = [BY_NAME["full_docs"], BY_NAME["full_ft"], BY_NAME["tuned_ft"]]
    for weight, why in ((None, f"no choice file {ft} (stage tune_ft has not run)"),
                        (0.0, "tuning_ft.weight is 0.0, not above 0")):
        if weight is not None:
            ft.write_text(f"weight: {weight}\n", encoding="utf-8")
        caplog.clear()
        kept, _ = runnable(chosen, "precedents", RetrieveParams(), None, Choices(choices.files))
        assert [c.name for c in kept] == ["full_docs"]
        assert f"system full_ft skipped: {why}" in caplog.text
        assert "system tuned_ft skipped: its component full_docs cannot run: its component " \
               f"full_ft cannot run: {why}" in caplog.text
    ft.write_text("weight: 0.5\n", encoding="utf-8")
    kept, _ = runnable(chosen, "precedents", RetrieveParams(), None, Choices(choices.files))
    assert [c.name for c in kept] == ["full_docs", "full_ft", "tuned_ft"]
    params = BY_NAME["full_ft"].params(RetrieveParams(), 10, Choices(choices.files))
    assert params.fusion_weights["precedents"] == {"bm25": 1.0, "dense": 0.5}


def test_the_scores_table_skips_a_collection_the_run_did_not_score(capsys):
    """evaluate --opt-in scores the precedent collections only: the statute collection comes
    back empty, and printing the scores must not fail on it (it stopped the opt-in build at
    d898ad5 with StopIteration after writing its metrics)."""
    from countercase.cli.evaluation import _print_scores

    _print_scores({"aila2019-task2": {},
                   "citations": {"dense_ft": {"MAP": 0.1234, "system": "dense_ft"}}})
    err = capsys.readouterr().err
    assert "citations" in err and "0.1234" in err and "aila2019-task2" not in err


def test_evaluate_in_parts_scores_the_runs_of_one_pass(trec_collection, run_cli, tmp_path):
    """``evaluate --part i/N`` then ``--parts N`` (the stage's part stages): each part ranks a
    share of the queries; the joined runs, per-query table and scores are one pass's. A part
    that is missing is named, with its command."""
    root, _ = trec_collection
    args = ["evaluate", "--docs", str(root / "docs.jsonl"), "--topics", str(root / "topics.tsv"),
            "--qrels", str(root / "qrels.txt"), "--condition", "bm25_docs", "--condition",
            "hybrid_rrf", "--resume-dir", str(tmp_path / "resume")]
    whole, joined = tmp_path / "whole", tmp_path / "joined"
    assert run_cli(*args, "--out", str(whole), "--metrics", str(tmp_path / "whole.json"))[0] == 0
    assert run_cli(*args, "--out", str(joined), "--part", "1/2")[0] == 0
    code, _, err = run_cli(*args, "--out", str(joined), "--parts", "2")
    assert code == 2 and "part 2 of 2" in err and "--part 2/2" in err
    assert run_cli(*args, "--out", str(joined), "--part", "2/2")[0] == 0
    shares = [json.loads((tmp_path / f"joined_parts/{i}of2/topics.json").read_text())["qids"]
              for i in (1, 2)]  # a TREC collection is named after its topics file
    assert shares == [["AILA_Q1", "AILA_Q2"], ["AILA_Q3", "AILA_Q4"]]
    code, _, err = run_cli(*args, "--out", str(joined), "--parts", "2",
                           "--metrics", str(tmp_path / "joined.json"))
    assert code == 0, err
    assert (tmp_path / "joined.json").read_text() == (tmp_path / "whole.json").read_text()
    for name in ("bm25_docs.run", "hybrid_rrf.run", "per_query.csv", "significance.json"):
        assert (joined / "topics" / name).read_bytes() == (whole / "topics" / name).read_bytes()
