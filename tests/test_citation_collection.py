"""The citation collection on real AILA judgments: masking, the leakage guard, near-copy groups,
the date rule carried to every search and applied to every run, and the levers tuned on it
(pooling, fusion, the citation prior)."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from countercase.citations.run import build_collection, near_copy_groups
from countercase.config import CitationsParams, RetrieveParams
from countercase.datasets import CollectionError, citation_dataset
from countercase.datasets.citations import decided_by, read_citations
from countercase.datasets.limits import Limit, Topics, limit_of, merged
from countercase.experiment.choice import TIE_MARGIN, best
from countercase.experiment import Experiment, ranked, score_run
from countercase.retrieve.pooling import pool_scores
from countercase.retrieve.prior import citation_counts, with_prior
from countercase.extract.masking import mask, person_names
from countercase.extract.metadata import parse_date

_YEAR = re.compile(r"\b(1[89]\d\d|20[0-2]\d)\b")


def _key(doc_id: str) -> int:
    return int(doc_id[1:])


@pytest.fixture(scope="module")
def corpus(aila_files) -> dict[str, str]:
    """The first 600 AILA judgments (the resolver can only resolve a title it has seen)."""
    docs = aila_files.casedocs()
    return {d: docs[d] for d in sorted(docs, key=_key)[:600]}


@pytest.fixture(scope="module")
def years(corpus) -> dict[str, int | None]:
    """Each judgment's year: the first year printed in its header (its date line)."""
    return {d: int(m.group(1)) if (m := _YEAR.search(text[:300])) else None
            for d, text in corpus.items()}


@pytest.fixture(scope="module")
def dates(corpus) -> dict[str, str | None]:
    return {d: (day.isoformat() if (day := parse_date(text[:300])) else None)
            for d, text in corpus.items()}


@pytest.fixture(scope="module")
def built(corpus, years, dates, aila_files, tmp_path_factory):
    queries = aila_files.queries()
    texts = dict(corpus)
    # plant an AILA query in a citing judgment: the leakage guard must keep it out
    planted = "C10"
    texts[planted] = texts[planted] + "\n" + queries["AILA_Q12"]
    # and one citing judgment in another (C6 then holds C5's facts): one query of the two
    texts["C6"] = texts["C6"] + "\n" + texts["C5"]
    out = tmp_path_factory.mktemp("citations")
    report = build_collection(texts, years, dates, {}, queries, CitationsParams(), 2019, out)
    return out, report, planted, texts


def test_masking_hides_person_parties_and_statutes(corpus):
    text = corpus["C4"]
    title = text.lstrip().split("\n", 1)[0]
    assert title.startswith("Budh Singh")
    masked = mask(text[:3000], title)
    assert "Budh" not in masked.text and "Singh" not in masked.text and "P1" in masked.text
    assert masked.statutes > 0 and masked.acts > 0 and masked.parties > 0
    # no provision number is left after a masked section keyword
    assert not re.search(r"\bSections?\s+\d", masked.text)
    assert "State of Uttar Pradesh" in masked.text  # an institution keeps its name, as in AILA


def test_an_institution_party_is_not_masked(corpus):
    assert person_names("Bridge and Roof Company (India), Limited v Union of India") == ["", ""]
    assert person_names("Ashok Dhingra v N.C.T. of Delhi") == ["Ashok Dhingra", ""]
    assert person_names("no title here") == []


def test_queries_cite_only_earlier_judgments_and_never_leak(built, years):
    out, report, planted, texts = built
    found = read_citations(out)
    assert len(found.topics) >= 50
    assert planted not in found.topics
    assert planted in report["leaking_documents"]
    assert report["skipped"]["holds an AILA query's text"] == 1  # the planted citing judgment
    for qid, relevant in found.qrels.items():
        assert all(years[d] <= found.years[qid] for d in relevant), qid
    for qid, text in list(found.topics.items())[:40]:
        title = texts[qid].lstrip().split("\n", 1)[0]
        for name in filter(None, person_names(title)):
            assert name.lower() not in text.lower(), (qid, name)
    parts = Counter(found.part.values())
    assert abs(parts["tuning"] - parts["heldout"]) <= 1


def test_a_near_copy_group_keeps_one_query_and_hides_the_others_from_it(built, dates):
    out, report, _, _ = built
    found = read_citations(out)
    assert report["near_copies"]["groups"] == [["C5", "C6"]]
    assert report["skipped"]["a near-copy of another query"] == 1
    assert "C5" in found.topics and "C6" not in found.topics
    limit = found.limits["C5"]
    assert {"C5", "C6"} <= limit.exclude and not found.admits("C5", "C6")
    # the date rule within the query's year: only judgments dated no later are admitted
    year, day = found.years["C5"], dates["C5"]
    same_year = [d for d, y in found.years.items() if y == year and d not in ("C5", "C6")]
    assert same_year
    for d in same_year:
        assert found.admits("C5", d) == (dates[d] <= day), d


def test_the_date_rule():
    assert decided_by(1990, None, 1991, None)
    assert not decided_by(1992, "1992-01-01", 1991, "1991-12-31")
    assert decided_by(1991, "1991-03-01", 1991, "1991-03-01")
    assert not decided_by(1991, "1991-03-02", 1991, "1991-03-01")
    assert not decided_by(1991, None, 1991, "1991-03-01")  # undated: might be later
    assert not decided_by(None, None, 1991, "1991-03-01")


def test_near_copies_link_queries_into_groups(corpus):
    facts = {d: corpus[d][:1500] for d in ("C20", "C30", "C40")}
    texts = {**corpus, "C30": corpus["C30"] + "\n" + corpus["C20"][:1500]}
    copies, groups = near_copy_groups(facts, texts, 0.5)
    assert copies["C20"] == {"C30"} and not copies.get("C40")
    assert groups == [["C20", "C30"]]


def test_the_limits_reach_every_system_with_the_topics(built):
    out, _, _, _ = built
    data = citation_dataset(out, "tuning")
    seen = {}

    def system(topics):
        seen.update({q: limit_of(topics, q) for q in topics})
        return {q: [] for q in topics}

    Experiment({"probe": system}, data, measures=["MAP"])
    assert seen == data.limits and all(isinstance(v, Limit) for v in seen.values())
    assert all(seen[q].year_to == data.years[q] and q in seen[q].exclude for q in seen)
    both = merged(data.topics, {"AILA_Q1": "text"})
    assert limit_of(both, "AILA_Q1") is None and limit_of(both, data.qids[0]) == seen[data.qids[0]]
    assert limit_of({"q": "plain mapping"}, "q") is None
    assert Topics({"a": "x", "b": "y"}, {"a": Limit(2000)}).subset(["b"]).limits == {}


def test_every_run_is_cut_to_what_the_collection_admits(built, years):
    out, _, _, _ = built
    data = citation_dataset(out, "tuning")
    qid = next(iter(data.queries))
    year = read_citations(out).years[qid]
    relevant = list(data.qrels[qid])
    later = next(d for d, y in years.items() if y is not None and y > year)
    # the query itself and a later judgment ranked above its relevant ones: both are dropped
    cheat = {qid: ranked([qid, later, *relevant])}
    honest = {qid: ranked(relevant)}
    one = data.subset([qid], "one")
    assert score_run(cheat, one, ["MAP"]).equals(score_run(honest, one, ["MAP"]))
    result = Experiment({"cheat": lambda topics: cheat}, one, measures=["MAP"])
    assert [d for d, _ in result.runs["cheat"][qid]] == relevant
    assert result.aggregate()["cheat"]["MAP"] == 1.0


def test_a_damaged_collection_file_is_named(built, tmp_path):
    out, _, _, _ = built
    for name in ("topics.tsv", "qrels.txt", "judgments.tsv", "copies.tsv", "links.tsv"):
        (tmp_path / name).write_bytes((out / name).read_bytes())
    (tmp_path / "cases.tsv").write_text("C1\t2001\tdevelopment\n", encoding="utf-8")
    with pytest.raises(CollectionError, match="cases.tsv.*development"):
        read_citations(tmp_path)
    (tmp_path / "cases.tsv").unlink()
    with pytest.raises(CollectionError, match="missing cases.tsv"):
        read_citations(tmp_path)


def test_pooling_rules_order_judgments_differently():
    doc_of = {"a1": "A", "a2": "A", "b1": "B", "b2": "B", "c1": "C"}
    first_of = {"A": "a1", "B": "b1", "C": "c1"}
    hits = [("c1", 9.0), ("a2", 8.0), ("b1", 7.0), ("b2", 6.5), ("a1", 1.0)]
    assert pool_scores(hits, doc_of, first_of, "max") == ["C", "A", "B"]
    assert pool_scores(hits, doc_of, first_of, "sum2") == ["B", "C", "A"]
    assert pool_scores(hits, doc_of, first_of, "first") == ["C", "B", "A"]
    # sum3 adds whatever a judgment has (A: 8 + 1, B: 7 + 6.5); mean3 divides by what it has
    assert pool_scores(hits, doc_of, first_of, "sum3") == ["B", "C", "A"]
    assert pool_scores(hits, doc_of, first_of, "mean3") == ["C", "B", "A"]
    with pytest.raises(ValueError, match="unknown pooling"):
        pool_scores(hits, doc_of, first_of, "median")


def test_the_citation_prior_sees_only_what_the_query_may_see():
    links = [("Q", "A"), ("X", "A"), ("Y", "B"), ("Y", "A")]
    admits = lambda qid, doc: doc not in (qid, "Y")  # noqa: E731 (Y: decided after Q)
    counts = citation_counts(links, ["Q"], admits)
    assert counts["Q"] == Counter({"A": 1})  # Q's own citation and Y's are not counted
    hidden = citation_counts(links, ["Q"], None, {"Q": ["X"]})
    assert hidden["Q"] == Counter({"A": 2, "B": 1})
    run = {"Q": ranked(["B", "C", "A"])}
    same = with_prior(lambda topics: run, counts, 0.0, 60, 10)({"Q": ""})
    assert [d for d, _ in same["Q"]] == ["B", "C", "A"]
    lifted = with_prior(lambda topics: run, counts, 5.0, 60, 10)({"Q": ""})
    assert [d for d, _ in lifted["Q"]][0] == "A"


def test_the_tuning_rule_prefers_the_earlier_point_within_the_margin():
    rows = [{"w": 0, "tuning_MAP": 0.1}, {"w": 1, "tuning_MAP": 0.1 + TIE_MARGIN / 2},
            {"w": 2, "tuning_MAP": 0.1 + 2 * TIE_MARGIN}]
    assert best(rows)["w"] == 2
    assert best(rows[:2])["w"] == 0


def test_a_regression_on_the_citation_collection_names_its_held_out_half():
    from countercase.evaluate.verify import new_record
    from countercase.evaluate.regressions import RegressionError

    assert new_record("citations/full_docs_prior") == {
        "collection": "citations", "condition": "full_docs_prior", "dataset": "citations/heldout"}
    with pytest.raises(RegressionError, match="citations/full"):
        new_record("citations/no_such_condition")


def test_a_tuning_choice_without_a_setting_is_named(tmp_path):
    from countercase.retrieve.choices import ChoiceError, Choices
    from countercase.retrieve.compose import why_not
    from countercase.retrieve.registry import BY_NAME

    choice = tmp_path / "choice.yaml"
    choice.write_text("precedents:\n  passages_bm25: {pool: sum2, k1: 0.9}\n  docs: {k1: 1.2, b: 0.4}\n"
                      "  docs_fusion: {weight: 1.0}\n  prior: {weight: 0.25}\n", encoding="utf-8")
    choices = Choices({"tuning": choice})
    assert choices.get({"choice": "tuning.precedents.docs.k1"}) == 1.2
    with pytest.raises(ChoiceError, match=r"choice.yaml holds no precedents\.passages_bm25\.b"):
        choices.get({"choice": "tuning.precedents.passages_bm25.b"})
    why = why_not([BY_NAME["passages_tuned"], BY_NAME["docs_tuned"]], "precedents",
                  RetrieveParams(), choices)
    assert list(why) == ["passages_tuned"] and "passages_bm25.b (rerun stage tune)" in why[
        "passages_tuned"]
    choice.write_text("- not a mapping\n", encoding="utf-8")
    with pytest.raises(ChoiceError, match="choice.yaml: not a mapping"):
        Choices({"tuning": choice}).get({"choice": "tuning.precedents.docs.k1"})
    with pytest.raises(ChoiceError, match="stage tune has not run"):
        Choices({"tuning": tmp_path / "none.yaml"}).get({"choice": "tuning.precedents.docs.k1"})


def test_the_prior_under_the_collection_rule_counts_only_earlier_citers(built):
    out, _, _, _ = built
    found = read_citations(out)
    qid = next(q for q in found.topics if any(a != q for a, _ in found.links))
    counts = citation_counts(found.links, [qid], found.admits)[qid]
    seen = Counter(b for a, b in found.links
                   if a not in found.limits[qid].exclude and found.years.get(a) is not None
                   and found.years[a] <= found.years[qid])
    assert counts == seen


def test_the_tuned_system_is_named_from_the_choice_by_its_rule():
    from countercase.evaluate.tuning import tuned_system

    assert tuned_system({"docs_fusion": {"weight": 0.0}, "prior": {"weight": 0.0}}) == "full"
    assert tuned_system({"docs_fusion": {"weight": 2.0}, "prior": {"weight": 0.0}}) == "full_docs"
    assert tuned_system({"docs_fusion": {"weight": 0.0}, "prior": {"weight": 0.1}}) == "full_docs_prior"
