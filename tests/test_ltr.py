"""The learned ranker on the small real corpus of ``indexed_corpus``: one pair's features
computed by hand, missing sheets as NaN, two trainings giving one model, a model of other
features refused, the unmasked query without its citations, the declared families."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from conftest import INDEXED_JUDGMENTS, ROOT
from countercase.config import ConfigError
from countercase.datasets import Dataset
from countercase.datasets.limits import Limit


@pytest.fixture(scope="module")
def sheets_and_facts(indexed_corpus, tmp_path_factory, aila_files):
    """The rule sheets of the twelve judgments (judgments.jsonl) and their fact index."""
    import pandas as pd

    from countercase.factsheet.rules import extract_rules
    from countercase.index.facts import build_fact_index

    paths, _, _ = indexed_corpus
    root = tmp_path_factory.mktemp("ltr")
    texts = aila_files.casedocs(INDEXED_JUDGMENTS)
    sheets = [extract_rules(text, doc, "judgment") for doc, text in texts.items()]
    path = root / "judgments.jsonl"
    path.write_text("".join(s.model_dump_json() + "\n" for s in sheets), encoding="utf-8")
    years = pd.read_parquet(paths.metadata, columns=["doc_id", "year"])
    build_fact_index(sheets, dict(zip(years["doc_id"], years["year"])), {}, root / "facts")
    return path, root / "facts"


@pytest.fixture(scope="module")
def source(indexed_corpus, sheets_and_facts):
    from dataclasses import replace

    from countercase.retrieve.features import FeatureSource

    paths, _, _ = indexed_corpus
    sheets, facts = sheets_and_facts
    opened = FeatureSource.open(replace(paths, fact_index=facts), sheets, 1.2, 0.75, 5, 200)
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def known_items(aila_files) -> Dataset:
    texts = aila_files.casedocs(INDEXED_JUDGMENTS[:8])
    queries = {f"K{d}": text[len(text) // 2:len(text) // 2 + 1500] for d, text in texts.items()}
    return Dataset("known/dev", "known", "precedents", queries,
                   {f"K{d}": {d: 1} for d in texts})


def test_one_pairs_features_by_hand(source, indexed_corpus, aila_files):
    from countercase.index.bm25 import Bm25Searcher
    from countercase.index.encoders import embed
    from countercase.retrieve.features import FEATURES, Sheet

    paths, _, _ = indexed_corpus
    text = aila_files.casedocs(["C3"])["C3"][2000:3500]
    frame = source.frame("C3", text, Limit(), {"C3": 4, "C5": 2})
    assert list(frame.columns) == list(FEATURES) and len(frame) >= 5
    doc = frame.index[0]

    def by_hand(raw: dict) -> float:  # min-max over the pool (SCALED)
        pool = [raw.get(d, 0.0) for d in frame.index]
        return (raw.get(doc, 0.0) - min(pool)) / (max(pool) - min(pool))

    with Bm25Searcher(paths.index_dir / "precedents_docs", k1=1.2, b=0.75) as docs:
        assert frame.at[doc, "bm25_doc"] == pytest.approx(by_hand(dict(docs.search(text, 50))))
    vector = embed(source.encoder, [text], show_progress=False)[0]
    cosine = {d: float(max(source.dense.matrix[i] @ vector for i, c in
                           enumerate(source.dense.ids) if source.doc_of[c] == d))
              for d in frame.index}
    assert frame.at[doc, "dense_max"] == pytest.approx(by_hand(cosine), abs=1e-5)
    assert frame["bm25_doc"].max() == 1.0 and frame["dense_max"].min() == 0.0
    assert frame.at[doc, "prior"] == pytest.approx(math.log1p({"C3": 4, "C5": 2}.get(doc, 0)))
    years = source.years["C3"], source.years[doc]
    assert (frame.at[doc, "year_gap"] == years[0] - years[1] if None not in years
            else math.isnan(frame.at[doc, "year_gap"]))
    query: Sheet = source.query_sheet("C3", text)
    shared = query.tokens & source.sheets[doc].tokens
    assert frame.at[doc, "sections_shared"] == sum(t.startswith("fsec") for t in shared)
    assert frame.at[doc, "evidence_shared"] == sum(t.startswith("fev") for t in shared)


def test_a_judgment_outside_the_pool_is_scored_by_the_pools_bounds(source, aila_files):
    text = aila_files.casedocs(["C5"])["C5"][500:2000]
    pool = source.frame("C5", text)
    outside = [d for d in source.doc_ids if d not in set(pool.index)]
    assert outside, "the pool holds every judgment of the small corpus"
    more = source.frame("C5", text, extra=(outside[0], pool.index[0]))
    assert list(more.index) == [*pool.index, outside[0]]
    assert more.iloc[:len(pool)].equals(pool)  # the pool's rows and bounds unchanged


def test_a_pool_of_some_first_stages_and_a_source_without_sheets(indexed_corpus, source,
                                                                 aila_files):
    """The pool is the union of the first-stage lists named (configs/dense_rule.yaml sets one
    without dense beside the full one); a collection without sheets opens with the sheet and
    holding groups unknown."""
    from countercase.retrieve.features import FEATURES, FeatureSource

    paths, _, _ = indexed_corpus
    text = aila_files.casedocs(["C7"])["C7"][800:2300]
    full = source.frame("C7", text)
    lexical = FeatureSource.open(paths, None, 1.2, 0.75, 5, 200, ("chunk_bm25", "doc_bm25"))
    try:
        pool = lexical.frame("C7", text)
    finally:
        lexical.close()
    assert set(pool.index) <= set(full.index) and len(pool) <= 10  # two lists of at most 5
    unknown = [n for n, (group, _) in FEATURES.items() if group in ("facts", "holdings")]
    assert pool[unknown].isna().all().all() and not pool["bm25_doc"].isna().any()
    with pytest.raises(ValueError, match="pool sources"):
        FeatureSource.open(paths, None, 1.2, 0.75, 5, 200, ("bm25",))


def test_a_candidate_without_a_sheet_has_nan_fact_features(source, aila_files):
    from countercase.retrieve.features import FEATURES

    text = aila_files.casedocs(["C4"])["C4"][1000:2500]
    full = source.frame("AILA_Q99", text)
    doc = full.index[0]
    kept = source.sheets.pop(doc)
    try:
        before = source.missing_sheets
        frame = source.frame("AILA_Q98", text)  # not the kept pool of AILA_Q99
        assert source.missing_sheets == before + 1
    finally:
        source.sheets[doc] = kept
    facts = [n for n, (group, _) in FEATURES.items() if group == "facts"]
    assert frame.loc[doc, facts].isna().all()
    assert not frame.loc[doc, ["bm25_doc", "dense_max"]].isna().any()
    assert math.isnan(frame.at[doc, "year_gap"])  # a query without a year


def test_two_trainings_give_one_model_and_a_model_of_other_features_is_refused(
        source, known_items, tmp_path):
    from countercase.ltr.train import Pairs, contributions, cross_validate, fit, learner
    from countercase.retrieve.features import names
    from countercase.retrieve.ltr import LearnedRanker, LtrModelError

    frames = {q: source.frame(q, t) for q, t in known_items.queries.items()}
    pairs = Pairs.of(frames, known_items.qrels)
    settings = {"folds": 2, "grid": {"num_leaves": [3], "min_data_in_leaf": [2]},
                "fixed": {"learning_rate": 0.1, "lambda_l2": 1.0, "feature_fraction": 0.8},
                "max_rounds": 20, "early_stopping_rounds": 5}
    first = cross_validate(pairs, names(), settings, 7)
    assert first == cross_validate(pairs, names(), settings, 7)
    models = [fit(pairs, names(), learner(settings, first[1], 7), 10) for _ in range(2)]
    assert models[0].model_to_string() == models[1].model_to_string()
    shares = contributions(models[0], pairs, names())
    assert list(shares) == names() and sum(shares.values()) == pytest.approx(1.0, abs=0.01)
    path = tmp_path / "ltr.txt"
    models[0].save_model(str(path))
    assert LearnedRanker.load(path).features == names()
    no_facts = fit(pairs, names(["facts"]), learner(settings, first[1], 7), 5)
    no_facts.save_model(str(path))
    assert LearnedRanker.load(path).features == names(["facts"])  # an ablation's model
    renamed = [f"x_{n}" if n == "prior" else n for n in names()]
    pairs.frame = pairs.frame.rename(columns={"prior": "x_prior"})
    fit(pairs, renamed, learner(settings, first[1], 7), 5).save_model(str(path))
    with pytest.raises(LtrModelError, match="x_prior.*are not the code's.*'prior'"):
        LearnedRanker.load(path)
    with pytest.raises(LtrModelError, match="no learned ranker"):
        LearnedRanker.load(tmp_path / "none.txt")


def test_scores_are_scaled_over_the_pool_missing_kept_and_equal_ones_zero():
    import pandas as pd

    from countercase.retrieve.features import FEATURES, SCALED, scaled

    frame = pd.DataFrame({name: [2.0, 4.0, 6.0] for name in FEATURES}, index=["a", "b", "c"])
    frame.loc["b", "bm25_chunk_max"] = math.nan
    frame["fact_bm25"] = 3.0
    out = scaled(frame)
    assert out["bm25_doc"].tolist() == [0.0, 0.5, 1.0]
    assert out["bm25_chunk_max"].tolist()[::2] == [0.0, 1.0]
    assert math.isnan(out.at["b", "bm25_chunk_max"])
    assert out["fact_bm25"].tolist() == [0.0, 0.0, 0.0]  # equal throughout: no information
    unscaled = [n for n in FEATURES if n not in SCALED]
    assert out[unscaled].equals(frame[unscaled])


def test_the_unmasked_query_loses_its_own_citations_only():
    from countercase.citations.unmasked import strip_citations

    text = ("As held in Kehar Singh v. State (Delhi Admn.), (1988) 3 SCC 609, the accused under "
            "Section 302 IPC was convicted. In State of U.P. v. Ram Singh, AIR 1975 SC 123, the "
            "court held. The appellant was a tenant of the premises.")
    stripped, removed = strip_citations(text)
    assert removed == 4 and "Section 302 IPC was convicted" in stripped
    assert not any(name in stripped for name in ("Kehar", "SCC", "Ram Singh", "AIR"))
    assert "tenant of the premises" in stripped


def test_the_declared_families_are_read_and_tested():
    import pandas as pd

    from countercase.experiment.families import compare_families, randomisation, read_families

    declared = read_families(ROOT / "configs/ltr_rule.yaml")
    assert ("ltr", "full_docs_prior") in declared["learned"] and len(declared["ablations"]) == 3
    same = np.array([0.1, 0.5, 0.3])
    assert randomisation(same, same, 0) == 1.0
    better = randomisation(np.full(30, 0.6), np.full(30, 0.1), 0)
    assert better < 0.001
    per_query = {name: pd.DataFrame({"MAP": values}, index=[f"q{i}" for i in range(30)])
                 for name, values in (("ltr", np.linspace(0.2, 0.8, 30)),
                                      ("full", np.linspace(0.1, 0.7, 30)))}
    found = compare_families(per_query, declared, 0)
    assert set(found) == {"learned"} and found["learned"]["tests"]["ltr vs full"]["p_holm"] < 0.05
    assert "ltr vs full_docs_prior" in found["learned"]["not_scored"]


def test_a_bad_rule_file_is_named(tmp_path):
    from countercase.retrieve.features import read_settings

    path = tmp_path / "rule.yaml"
    path.write_text("settings: {pool_depth: 100}\n")
    with pytest.raises(ConfigError, match="rule.yaml: settings chunk_hits"):
        read_settings(path)
    assert read_settings(ROOT / "configs/ltr_rule.yaml")["pool_depth"] == 100
    json.dumps(read_settings(ROOT / "configs/ltr_rule.yaml"))  # plain values


def test_the_trees_learned_retriever_ranks_the_pool_under_the_nodes_limit(
        source, known_items, indexed_corpus, aila_files, tmp_path):
    from countercase.config import Params, RetrieveParams
    from countercase.ltr.train import Pairs, fit, learner
    from countercase.retrieve.features import names
    from countercase.retrieve.filters import FilterError, SearchFilter
    from countercase.retrieve.learned_search import LearnedRetriever
    from countercase.retrieve.trees import searching
    from countercase.retrieve.load import open_retriever
    from countercase.retrieve.ltr import LearnedRanker, rank_pool

    paths, _, _ = indexed_corpus
    pairs = Pairs.of({q: source.frame(q, t) for q, t in known_items.queries.items()},
                     known_items.qrels)
    settings = {"fixed": {"learning_rate": 0.1}}
    fit(pairs, names(), learner(settings, {"num_leaves": 3, "min_data_in_leaf": 2}, 7),
        10).save_model(str(tmp_path / "ltr.txt"))
    ranker = LearnedRanker.load(tmp_path / "ltr.txt")
    pipeline = open_retriever("precedents", RetrieveParams(steps=("bm25", "rerank", "bridge")),
                              paths)
    case = "C3"
    year = source.years[case]
    # C3 and a judgment decided after it cite C5: neither citation is one a search for C3 sees
    later = next(d for d in source.doc_ids if (source.years[d] or 0) > year)
    earlier = next(d for d in source.doc_ids if d != case and (source.years[d] or 9999) <= year)
    links = [(case, "C5"), (later, "C5"), (earlier, "C4")]
    learned = LearnedRetriever(pipeline, source, ranker, links, "ltr_unmasked")
    limit = SearchFilter(year_to=year, exclude_doc_ids=frozenset({case}))
    assert learned.counts(Limit(year, frozenset({case}))) == {"C4": 1}
    text = aila_files.casedocs([case])[case][2000:3500]
    hits = learned.search(text, limit, k=3).documents
    frame = source.frame(case, text, Limit(year, frozenset({case})), {"C4": 1})
    assert [h.doc_id for h in hits] == [d for d, _ in rank_pool(frame, ranker.scores(frame))[:3]]
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1)) and hits
    assert all(h.doc_id != case and source.years[h.doc_id] <= year for h in hits)
    assert all(source.doc_of[h.chunk_id] == h.doc_id for h in hits)  # its own passage
    with pytest.raises(FilterError, match="ltr_unmasked.*act_sections"):
        learned.search(text, SearchFilter(act_sections=frozenset({"IPC-302"})))
    params = searching(Params(), "ltr_unmasked")
    assert (params.perturb.learned, params.perturb.system) == ("ltr_unmasked", "no_rerank")
    assert searching(params, "bm25").perturb.learned is None
