"""Whether an edge moved the ranking toward the law's own record: the edge's citation-grounded
targets (:mod:`countercase.holdings.targets`: the precedents judgments holding the new value
cite markedly more, the *appear* set, and markedly less, the *drop* set), and how many of each
the top K held before and after the change. A ranker moved *toward* them when the appear set
gained more places in the top K than the drop set did."""

from __future__ import annotations

from typing import Any

from countercase.explain.claims import Claim, Sentence, moved, overlaps, value_words
from countercase.explain.edges import MAX_NAMED


def _named(ids: list[str], group: str) -> tuple[str, tuple[Claim, ...]]:
    shown = ids[:MAX_NAMED]
    more = f" and {len(ids) - MAX_NAMED} more" if len(ids) > MAX_NAMED else ""
    return (", ".join(shown) + more,
            tuple(Claim("target", d, "targets", group) for d in shown)
            + (Claim("count", len(ids), "targets", group),))


def _contrast(before: str | None, after: str | None) -> str:
    if after is None:
        return f"without {value_words(before)} rather than with it"
    return f"with {value_words(after)} rather than {value_words(before)}"


def explain_targets(moves: tuple[str | None, str | None] | None, targets: dict[str, Any],
                    diff: dict[str, Any], k: int) -> list[Sentence]:
    """``moves``: the fact values the edge moves from and to (None: the graph cannot speak to
    it); ``targets``: its appear and drop sets and why they are empty; ``diff``: the node's."""
    appear, drop = list(targets["appear"]), list(targets["drop"])
    if not appear and not drop:
        return [Sentence(f"The courts' citations name no precedent this change should bring up "
                         f"or push down ({targets['reason']}).", "no_targets",
                         (Claim("reason", targets["reason"], "targets", "reason"),))]
    parts, claims = [], []
    for ids, group, how in ((appear, "appear", "more"), (drop, "drop", "less")):
        if ids:
            named, found = _named(ids, group)
            parts.append(f"{how} often {named}")
            claims += found
    cited = Sentence(f"By the courts' own citations, judgments {_contrast(*moves)} cite "
                     f"{' and '.join(parts)}.", "targets", tuple(claims))
    counts = overlaps(targets, diff)
    verdict = moved((counts["appear:parent"], counts["appear:node"]),
                    (counts["drop:parent"], counts["drop:node"]))
    words = {"toward": "toward them", "away": "away from them",
             "neither": "neither toward them nor away"}[verdict]
    shown = []
    if appear:
        shown.append(f"{counts['appear:parent']} of those cited more before the change and "
                     f"{counts['appear:node']} after")
    if drop:
        shown.append(f"{counts['drop:parent']} of those cited less before and "
                     f"{counts['drop:node']} after")
    toward = Sentence(f"The top {k} held {'; '.join(shown)}: the ranking moved {words}.", "toward",
                      tuple(Claim("overlap", v, "targets", f) for f, v in counts.items())
                      + (Claim("toward", verdict, "targets", "top"),))
    return [cited, toward]
