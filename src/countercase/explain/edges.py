"""The plan's counterfactual summary of an edge: what changed, how many precedents dropped out of
the top K and how many appeared, and why, read from the dropped and new cases' own fact sheets and
metadata: the dropped ones that state the old fact, the new ones that state the new fact, and
whether the perturbed case itself still states it (checked against its sheet). When no case
states it, the summary says no reason is traced, never that none exists."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from countercase.explain.claims import Claim, Sentence, numbers_of, section_words, side_words
from countercase.factsheet.schema import FactSheet
from countercase.factsheet.thresholds import crosses, in_days, load_thresholds

MAX_NAMED = 3  # cases named in a sentence; the count says how many there are


def _value(kind: str, value: Any) -> float:
    return in_days(*value) if kind == "durations" else float(value)


def _states(edge: dict[str, Any], which: str, doc_id: str, sheet: FactSheet | None,
            metadata: dict[str, Any]) -> Claim | None:
    """The claim that ``doc_id`` states the edge's ``which`` ("old" or "new") fact, or None."""
    value, path, kind = edge[which], edge["path"], edge["fact_type"]
    if value is None:
        return None
    if kind == "section":
        if sheet is not None and value in {s.section_id for s in sheet.sections_cited}:
            return Claim("section", value, doc_id, "sections_cited")
        if value in (metadata.get("act_sections") or []):
            return Claim("section", value, doc_id, "metadata.act_sections")
        return None
    if sheet is None:
        return None
    if kind == "party":
        side = path.rsplit(".", 1)[-1]
        return (Claim("party", value, doc_id, f"parties.{side}")
                if getattr(sheet.parties, side).type == value else None)
    if kind == "evidence":
        return (Claim("evidence", value, doc_id, "evidence_items")
                if value in {e.evidence_type for e in sheet.evidence_items} else None)
    number_kind = path.split(".")[1]
    old, new = _value(number_kind, edge["old"]), _value(number_kind, edge["new"])
    crossed = [t.value for t in load_thresholds()[number_kind] if crosses(old, new, t.value)]
    if not crossed:
        return None
    boundary = crossed[0]
    below = _value(number_kind, value) < boundary
    if any((v < boundary) == below for v in numbers_of(sheet, number_kind)):
        return Claim("number_side", (number_kind, boundary, below), doc_id,
                     f"numerical_facts.{number_kind}")
    return None


def _fact_words(claim: Claim) -> str:
    if claim.kind == "section":
        return f"cite {section_words(claim.value)}"
    if claim.kind == "party":
        return f"have a {claim.value} as {claim.field.rsplit('.', 1)[-1]}"
    if claim.kind == "evidence":
        return f"rely on {claim.value} evidence"
    return f"state {side_words(*claim.value)}"


def _why(edge: dict[str, Any], which: str, ids: list[str], sheets: dict[str, FactSheet],
         metadata: dict[str, dict[str, Any]], node: FactSheet) -> Sentence:
    group = "dropped" if which == "old" else "new"
    claims = [c for doc in ids
              if (c := _states(edge, which, doc, sheets.get(doc), metadata.get(doc, {})))]
    if not claims:
        return Sentence(f"No reason for the {group} precedents is traced to the changed fact.",
                        "no_traced_reason")
    named = ", ".join(c.source for c in claims[:MAX_NAMED])
    more = f" and {len(claims) - MAX_NAMED} more" if len(claims) > MAX_NAMED else ""
    # what the perturbed case itself states, checked against its own sheet
    stated = _states(edge, which, "node", node, {}) is not None
    field = "sections_cited" if claims[0].kind == "section" else claims[0].field
    on_node = replace(claims[0], source="node", field=field, holds=stated)
    if which == "old":
        clause = ("which the perturbed case no longer states" if not stated
                  else "which the perturbed case still states at another mention")
    else:
        clause = ("which the perturbed case now states" if stated
                  else "the changed fact's new value")
    members = tuple(Claim("member", c.source, "diff", group) for c in claims)
    change = Claim("change", edge[which], "edge", which)
    return Sentence(f"Of the {group}, {named}{more} {_fact_words(claims[0])}, {clause}.",
                    f"{group}_{edge['fact_type']}",
                    tuple(claims) + members + (on_node, change))


def explain_edge(edge: dict[str, Any], diff: dict[str, Any], k: int,
                 sheets: dict[str, FactSheet], metadata: dict[str, dict[str, Any]],
                 node: FactSheet) -> list[Sentence]:
    """``edge``, ``diff``: a tree node's EdgeModel and DiffModel, dumped; ``sheets`` and
    ``metadata``: of the precedents (doc id -> fact sheet, case fields); ``node``: the
    perturbed case's sheet (checked as source ``node``)."""
    dropped = len(diff["dropped"])
    # the description verbatim: rules write a phrase ("DyingDeclaration removed"), not a clause
    counts = Sentence(
        f"After the change ({edge['description']}), {dropped} "
        f"{'precedent' if dropped == 1 else 'precedents'} dropped out of the top {k} and "
        f"{len(diff['new'])} appeared.", "change_counts",
        (Claim("change", edge["description"], "edge", "description"),
         Claim("count", dropped, "diff", "dropped"),
         Claim("count", len(diff["new"]), "diff", "new")))
    found = [counts]
    if edge["fact_type"] not in ("section", "party", "evidence", "numerical"):
        return found  # a hand edit: no rule fact to trace
    if diff["dropped"]:
        found.append(_why(edge, "old", diff["dropped"], sheets, metadata, node))
    if diff["new"]:
        found.append(_why(edge, "new", diff["new"], sheets, metadata, node))
    return found
