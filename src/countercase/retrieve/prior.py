"""A step of the registry's systems: a run fused by RRF with the ranking of its own judgments by
how often the corpus cites them (:func:`citation_counts`), at a weight."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping

from countercase.retrieve.fusion import reciprocal_rank_fusion
from countercase.retrieve.runs import Run, System


def citation_counts(links: Iterable[tuple[str, str]], qids: Iterable[str],
                    admits: Callable[[str, str], bool] | None = None,
                    exclude: Mapping[str, Iterable[str]] | None = None) -> dict[str, Counter]:
    """qid -> how often each judgment is cited by the judgments a search for qid may see:
    those the dataset admits (a citation query sees no later judgment, nor itself) and not
    in ``exclude`` (an AILA query's corpus copies)."""
    links = list(links)
    counts = {}
    for qid in qids:
        hidden = set((exclude or {}).get(qid, ()))
        counts[qid] = Counter(cited for citing, cited in links if citing not in hidden
                              and (admits is None or admits(qid, citing)))
    return counts


def with_prior(system: System, counts: Mapping[str, Counter], weight: float, k: int,
               depth: int) -> System:
    """``system``'s run fused with its judgments ranked by citation count (uncited ones get
    no prior), the prior at ``weight`` against the run's 1."""
    def rank(topics: Mapping[str, str]) -> Run:
        run = system(topics)
        out = {}
        for qid, ranking in run.items():
            docs = [d for d, _ in ranking]
            cited = counts.get(qid, Counter())
            prior = sorted((d for d in docs if cited[d] > 0), key=lambda d: -cited[d])
            out[qid] = reciprocal_rank_fusion({"run": docs, "prior": prior}, k,
                                              {"run": 1.0, "prior": weight})[:depth]
        return out
    return rank
