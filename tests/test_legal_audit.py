"""The legal audit's draw: seeded, per fact type, whole for a rare type, and blind to the engine."""

from countercase.perturb.audit import ENGINES, blind, draw, item_id, summary


def _pool(engine: str) -> list[dict]:
    rows = []
    for i in range(30):
        for fact_type, n in (("numerical", 3), ("section", 2), ("party", 0), ("evidence", 1)):
            for j in range(n):
                description = f"{fact_type} change {j}"
                rows.append({"item": item_id(f"C{i}", description, engine), "engine": engine,
                             "case_id": f"C{i}", "fact_type": fact_type,
                             "description": description, "basis": "b", "sections_cited": [],
                             "case_text": "facts"})
    rows.append({"item": item_id("C0", "party change", engine), "engine": engine,
                 "case_id": "C0", "fact_type": "party", "description": "party change",
                 "basis": "axis", "sections_cited": [], "case_text": "facts"})
    return rows


def test_each_type_is_drawn_up_to_its_quota_and_a_rare_one_whole():
    drawn = draw(_pool("before"), 20, seed=7)
    counts = {t: sum(r["fact_type"] == t for r in drawn)
              for t in ("numerical", "section", "party", "evidence")}
    assert counts == {"numerical": 20, "section": 20, "party": 1, "evidence": 20}
    assert draw(_pool("before"), 20, seed=7) == drawn
    assert draw(_pool("before"), 20, seed=8) != drawn


def test_the_blind_file_hides_the_engine_and_does_not_follow_input_order():
    before, after = draw(_pool("before"), 5, 1), draw(_pool("after"), 5, 1)
    merged = blind([before, after], seed=3)
    assert len(merged) == len(before) + len(after)
    assert all("engine" not in row for row in merged)
    assert merged == blind([after, before], seed=3)
    assert len({row["item"] for row in merged}) == len(merged)  # engines' ids never collide
    assert {"before", "after"} <= set(ENGINES)


def test_the_summary_counts_the_cases_each_type_reaches():
    found = summary(_pool("before"), 30)
    assert found["per_type"]["numerical"] == {"edges": 90, "case_share": 1.0}
    assert found["per_type"]["party"]["case_share"] == round(1 / 30, 4)


def test_the_results_count_unclear_in_the_denominator_and_the_defects(tmp_path):
    import json

    import pytest

    from countercase.perturb.audit import audit_results, cohen_kappa, read_audit_labels
    from countercase.perturb.cases import CaseFileError

    before = draw(_pool("before"), 2, 1)
    labels = tmp_path / "labels_A.jsonl"
    rows = [{"labeller": "A", "who": "model: test"}]
    for i, item in enumerate(before):
        label = ("meaningful", "not", "unclear")[i % 3]
        rows.append({"item": item["item"], "labeller": "A", "label": label,
                     "defect": "other" if label == "not" else None})
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    who, first = read_audit_labels(labels)
    found = audit_results({"before": before}, first, first)
    assert who == "model: test" and found["before"]["n"] == len(before) == 7
    assert found["before"]["meaningful_share"] == round(3 / 7, 4)
    assert found["before"]["unclear_share"] == round(2 / 7, 4)
    assert found["before"]["defects"] == {"other": 2}
    assert found["agreement"] == {"n": 7, "cohen_kappa": 1.0}
    assert cohen_kappa(["meaningful", "not"], ["not", "meaningful"]) < 0
    labels.write_text(json.dumps({"item": "x", "label": "maybe"}) + "\n")
    with pytest.raises(CaseFileError, match=r"labels_A.jsonl:1: label 'maybe'"):
        read_audit_labels(labels)


def test_the_after_sample_of_issue_57_is_read_under_two_criteria():
    from countercase.perturb.audit import criteria_results

    sample = [{"item": f"i{k}", "fact_type": t} for k, t in
              enumerate(["section", "section", "evidence", "party"])]
    a = {f"i{k}": {"item": f"i{k}", "apply": x, "decides": y} for k, (x, y) in
         enumerate([("yes", "yes"), ("yes", "no"), ("no", "no"), ("unclear", "no")])}
    b = {f"i{k}": {"item": f"i{k}", "apply": x, "decides": y} for k, (x, y) in
         enumerate([("yes", "yes"), ("yes", "yes"), ("no", "no"), ("no", "no")])}
    found = criteria_results(sample, {"A": a, "B": b})
    assert found["n"] == 4
    assert found["meaningful_share"]["apply"] == {"A": 0.5, "B": 0.5, "mean": 0.5}
    assert found["meaningful_share"]["decides"]["A"] == 0.25
    assert found["per_type"]["section"]["apply"] == {"A": 1.0, "B": 1.0}
    assert found["agreement"]["n_both"] == 4
    assert found["agreement"]["readers"]["decides"] == 0.5
