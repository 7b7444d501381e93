"""Citation-grounded counterfactual targets: for an edit v -> v' of a case's fact, the
precedents that judgments holding v' cite markedly more often than judgments holding v (its
*appear* set) and the reverse (its *drop* set). No annotator writes them: courts did, by citing.

A judgment *holds* a fact value when its fact sheet states it or its holding profile does
(:func:`facts_of`: the sections its facts cite and the provisions its reasons decide, the
evidence types, the party types, the sides of legal thresholds its numbers lie on). For an
edit, the two groups compared are the citing judgments that hold v' and not v (``H1``) and
those that hold v and not v' (``H0``); an evidence removal compares the holders of the item
with the judgments of the same population without it. The population is every judgment that
cites a corpus judgment and shares a legal domain with the case, never the case itself nor its
near-copies (leave-one-out); the ``heldout`` variant keeps only held-out judgments, so that no
citation a ranker learnt from (the tuning half's) decides a held-out case's targets.

A precedent p is in the appear set when ``lift = r1 / r0 >= settings.lift``, at least
``settings.min_citing`` judgments of ``H1`` cite it, and a one-sided Fisher exact test says
``H1`` cites it more than ``H0`` at ``settings.alpha`` (uncorrected: a filter, not a claim),
where ``r = (c + prior * base(p)) / (n + prior)`` is each group's citing rate shrunk towards
p's rate in the whole population (``base``): a precedent every judgment cites (a popular one)
needs a large difference to count, a group of few judgments moves little. The drop set is the same with the groups swapped. Both
groups must have at least ``settings.min_holders`` judgments, else the edit has no targets and
is counted as unsupported. Only precedents a search for the case may return are targets.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy.stats import hypergeom

from countercase.factsheet.schema import FactSheet
from countercase.factsheet.thresholds import crosses, in_days, load_thresholds
from countercase.factsheet.values import boundary, sheet_values
from countercase.holdings.profile import Profile
from countercase.perturb.rules import Perturbation

VARIANTS = ("whole", "heldout")


@dataclass(frozen=True)
class Settings:
    lift: float = 2.0
    min_citing: int = 2
    min_holders: int = 5
    prior: float = 5.0
    alpha: float = 0.1

    @classmethod
    def of(cls, params) -> "Settings":
        """From the ``targets`` section of ``params.yaml``."""
        return cls(params.lift, params.min_citing, params.min_holders, params.prior, params.alpha)


@dataclass(frozen=True)
class Targets:
    appear: tuple[str, ...]
    drop: tuple[str, ...]
    holders: tuple[int, int]  # |H0|, |H1|
    reason: str = ""  # why there are none ("" when the edit has targets)

    @property
    def found(self) -> bool:
        return bool(self.appear or self.drop)


def facts_of(sheet: FactSheet | None, profile: Profile | None) -> frozenset[str]:
    """The fact values a judgment holds (:mod:`countercase.factsheet.values`' keys): its sheet's
    and its holding profile's (the provisions its reasons decide, the evidence, party types and
    threshold sides they state)."""
    keys: set[str] = set(sheet_values(sheet)) if sheet is not None else set()
    if profile is not None:
        keys |= {f"section:{v}" for v in profile.values("provision", "decided")}
        keys |= {f"evidence:{v}" for v in profile.values("evidence")}
        keys |= {f"party:{v}" for v in profile.values("party")}
        keys |= {f"boundary:{v}" for v in profile.values("boundary")}
    return frozenset(keys)


def _days(kind: str, value) -> float:
    return in_days(*value) if kind == "durations" else float(value)


def contrast(p: Perturbation) -> tuple[str | None, str | None] | None:
    """The fact values an edit moves from and to (None: the value absent); None: an edit
    the citation graph cannot speak to (a renumbering, an addition of evidence, a reader's
    manual edit of several fields)."""
    if p.fact_type == "section":
        return f"section:{p.old}", f"section:{p.new}"
    if p.fact_type == "evidence":
        return (f"evidence:{p.old}", None) if p.new is None else None
    if p.fact_type == "party":
        return f"party:{p.old}", f"party:{p.new}"
    if p.fact_type != "numerical":  # a reader's own edit in the explorer (manual, no path)
        return None
    kind = p.path.split(".")[1]
    old, new = _days(kind, p.old), _days(kind, p.new)
    crossed = [t.value for t in load_thresholds()[kind] if crosses(old, new, t.value)]
    if not crossed:
        return None
    edge = min(crossed, key=lambda v: abs(v - old))  # the boundary next to the old value
    return boundary(kind, old, edge), boundary(kind, new, edge)


class Graph:
    """The citation links and every citing judgment's fact values, read once."""

    def __init__(self, links: Iterable[tuple[str, str]], facts: Mapping[str, frozenset[str]],
                 domains: Mapping[str, frozenset[str]]) -> None:
        self.cites: dict[str, set[str]] = defaultdict(set)
        for citing, cited in links:
            if citing != cited:
                self.cites[citing].add(cited)
        self.facts = {j: facts.get(j, frozenset()) for j in self.cites}
        self.domains = {j: domains.get(j, frozenset()) for j in self.cites}

    def population(self, domains: frozenset[str], leave_out: frozenset[str],
                   allowed: frozenset[str] | None = None) -> list[str]:
        return sorted(j for j in self.cites
                      if j not in leave_out and (allowed is None or j in allowed)
                      and (not domains or self.domains[j] & domains))

    def targets(self, edit: tuple[str | None, str | None], population: list[str],
                admits, settings: Settings) -> Targets:
        before, after = edit
        holds = lambda j, v: v is not None and v in self.facts[j]  # noqa: E731
        if after is None:  # a removal: the holders against the rest
            h0 = [j for j in population if holds(j, before)]
            h1 = [j for j in population if not holds(j, before)]
        else:
            h0 = [j for j in population if holds(j, before) and not holds(j, after)]
            h1 = [j for j in population if holds(j, after) and not holds(j, before)]
        sizes = (len(h0), len(h1))
        if min(sizes) < settings.min_holders:
            return Targets((), (), sizes, "too few holders")
        base: dict[str, int] = defaultdict(int)
        for j in population:
            for d in self.cites[j]:
                base[d] += 1

        def counts(group):
            found: dict[str, int] = defaultdict(int)
            for j in group:
                for d in self.cites[j]:
                    found[d] += 1
            return found

        c0, c1 = counts(h0), counts(h1)
        docs = [d for d in sorted(set(c0) | set(c1)) if admits(d)]
        a = np.array([c1.get(d, 0) for d in docs])
        b = np.array([c0.get(d, 0) for d in docs])
        n0, n1, n = len(h0), len(h1), len(h0) + len(h1)
        prior = settings.prior * np.array([base[d] for d in docs]) / len(population)
        r0 = (b + prior) / (n0 + settings.prior)
        r1 = (a + prior) / (n1 + settings.prior)
        # one-sided Fisher exact tests: H1 cites it more (more of its a + b citers in H1 than
        # the groups' sizes give), and the reverse
        p_more = hypergeom.sf(a - 1, n, a + b, n1)
        p_less = hypergeom.sf(b - 1, n, a + b, n0)
        appear = [d for d, x, u, v, p in zip(docs, a, r1, r0, p_more)
                  if x >= settings.min_citing and u >= settings.lift * v and p <= settings.alpha]
        drop = [d for d, x, u, v, p in zip(docs, b, r0, r1, p_less)
                if x >= settings.min_citing and u >= settings.lift * v and p <= settings.alpha]
        return Targets(tuple(appear), tuple(drop), sizes,
                       "" if appear or drop else "no precedent passes the lift")
