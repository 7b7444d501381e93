"""The legal operative label (docs/preregistration/validity_v2.md, section 5) on a judgment
laid out as the segmenter reads one: only what its Ratio and Held segments state counts, and
never a default party type."""

from __future__ import annotations

from countercase.confirm.label import Reasons, operative
from countercase.perturb.rules import Perturbation

JUDGMENT = """Supreme Court of India
State v. Ram
J U D G M E N T
FACTS:
The appellant, a tenant of the shop, was aged 19 years. Section 498A IPC was invoked. The
medical report was produced.
REASONS:
We hold that the dying declaration is reliable and the conviction under Section 302 IPC must
stand. The respondent, a licensee, was 16 years of age at the time. The claim of Rs. 50,000 was
made within 2 years.
ORDER:
The appeal is dismissed.
"""


def _edit(fact_type: str, path: str, old, new) -> Perturbation:
    return Perturbation(fact_type, path, old, new, "", "")


def test_only_the_reasons_of_the_precedent_count():
    reasons = Reasons.of(JUDGMENT, ["IPC-302"])
    assert reasons.sections == {"IPC-302"}  # 498A is in the facts only
    assert operative(_edit("section", "sections_cited.0", "IPC-302", "IPC-304"), reasons)
    assert not operative(_edit("section", "sections_cited.0", "IPC-498A", "IPC-306"), reasons)
    removed = _edit("evidence", "evidence_items", "DyingDeclaration", None)
    assert operative(removed, reasons)
    assert not operative(_edit("evidence", "evidence_items", "MedicalReport", None), reasons)
    assert not operative(_edit("evidence", "evidence_items", "DyingDeclaration",
                               "Confession"), reasons)  # an item added is no removal
    assert operative(_edit("party", "parties.respondent", "Licensee", "Tenant"), reasons)
    assert not operative(_edit("party", "parties.petitioner", "Tenant", "Licensee"), reasons)


def test_a_default_party_type_never_counts():
    stated = JUDGMENT.replace("a licensee", "an individual")
    reasons = Reasons.of(stated, ["IPC-302"])
    assert "Individual" not in reasons.parties
    assert not operative(_edit("party", "parties.petitioner", "Individual", "Minor"), reasons)


def test_a_number_counts_on_the_same_side_of_a_crossed_boundary_of_its_domain():
    reasons = Reasons.of(JUDGMENT, ["IPC-302"])  # a criminal case stating the age 16
    assert reasons.numbers["ages"] == (16.0,)
    # 17 -> 18 crosses 18; the precedent's 16 is on 17's side
    assert operative(_edit("numerical", "numerical_facts.ages.0", 17.0, 18.0), reasons)
    # 19 -> 17 crosses 18 too, but 16 is on the other side of it from 19
    assert not operative(_edit("numerical", "numerical_facts.ages.0", 19.0, 17.0), reasons)


def test_a_renumbering_is_never_operative():
    reasons = Reasons.of(JUDGMENT, ["IPC-302"])
    assert not operative(_edit("section", "sections_cited.0", "IPC-302", "BNS-103"), reasons)


def test_the_hand_labels_are_read_back_and_set_against_the_label(tmp_path):
    import json

    from countercase.confirm.hand_labels import label_agreement, perturbation_of

    assert perturbation_of("Age changed from 17 to 18 (now of age)").new == 18.0
    assert perturbation_of("Duration doubled from 4 to 8 months").old == (4.0, "months")
    assert perturbation_of("The respondent changed from Licensee to Tenant (x)").path == \
        "parties.respondent"
    assert perturbation_of("Something else entirely") is None
    rows = [("C1", "Section IPC-302 changed to IPC-304 (chapter)", "A", True),
            ("C1", "Section IPC-302 changed to IPC-304 (chapter)", "B", True),
            ("C1", "Section IPC-302 changed to BNS-103 (correspondence)", "A", False),
            ("C1", "Section IPC-302 changed to BNS-103 (correspondence)", "B", True),
            ("C1", "Confession added", "A", True), ("C1", "Confession added", "B", True),
            ("C1", "A wording of no rule", "A", True)]
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps({"case_id": c, "description": d, "annotator": a,
                                        "operative": o}) + "\n" for c, d, a, o in rows))
    reasons = Reasons.of(JUDGMENT, ["IPC-302"])
    found = label_agreement(path, {"C1": ("P1",)}, lambda docs: {d: reasons for d in docs})
    # ours: 302 -> 304 operative; the renumbering and the item added not
    assert found["A"] == {"n": 3, "agreement": 0.6667, "kappa": found["A"]["kappa"],
                          "operative_share_label": 0.3333, "operative_share_annotator": 0.6667}
    assert found["B"]["agreement"] == 0.3333 and found["consensus"]["n"] == 2
    assert found["items_labelled"] == 4 and found["items_unread"] == 1
