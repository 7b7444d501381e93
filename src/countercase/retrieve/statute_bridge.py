"""Statutes through the precedents that cite them (the statute task's second ranking).

A statute is likely to apply to a case when the precedents most similar to that case cite it.
The bridge ranks statutes by the precedents retrieved for the query:
``score(s) = sum over the top-N precedents d citing s of 1 / (rank(d) + offset)``,
where "d cites s" means that the act sections the extract stage found in d include one of the
canonical section ids of s. The final statute ranking fuses this with the direct ranking (the
statute texts searched by the same pipeline) by weighted reciprocal rank fusion; statutes the
bridge cannot reach (no section id, or cited by none of the top precedents) keep their place
through the direct ranking.

Each AILA statute's canonical section ids come from the index stage
(:func:`countercase.index.statute_map.map_statutes`); statutes it cannot map stay reachable by the
direct ranking only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from countercase.retrieve.fusion import reciprocal_rank_fusion
from countercase.retrieve.pipeline import Hit, RetrievalResult
from countercase.retrieve.runs import Run, System


@dataclass
class StatuteBridge:
    statute_sections: dict[str, list[str]]  # statute id -> canonical section ids
    doc_sections: dict[str, frozenset[str]]  # judgment id -> the section ids it cites
    depth: int = 20
    rank_offset: float = 0.0

    def __post_init__(self) -> None:
        self._statutes_of: dict[str, list[str]] = {}
        for statute_id, sections in self.statute_sections.items():
            for section in sections:
                self._statutes_of.setdefault(section, []).append(statute_id)

    def rank(self, precedents: Sequence[str], exclude: Iterable[str] = ()) -> list[tuple[str, float]]:
        """Statutes by the ranked precedent ids (best first); ``exclude``: judgments not to use
        (e.g. a near-copy of the query itself, which would give its own answer away)."""
        excluded = set(exclude)
        used = [d for d in precedents if d not in excluded][:self.depth]
        scores: dict[str, float] = {}
        for rank, doc_id in enumerate(used, start=1):
            cited = {s for section in self.doc_sections.get(doc_id, ())
                     for s in self._statutes_of.get(section, ())}
            for statute_id in cited:
                scores[statute_id] = scores.get(statute_id, 0.0) + 1.0 / (rank + self.rank_offset)
        return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def fuse_statute_rankings(direct: Sequence[str], bridged: Sequence[str], weights: dict[str, float],
                          k: int) -> list[tuple[str, float]]:
    rankings = {"direct": list(direct), "precedents": list(bridged)}
    return reciprocal_rank_fusion({n: r for n, r in rankings.items() if weights.get(n, 0) > 0},
                                  k=k, weights={n: w for n, w in weights.items() if w > 0})


def bridge_system(precedents: System, bridge: StatuteBridge,
                  exclude: Mapping[str, Iterable[str]], depth: int) -> System:
    """Statutes by the bridge alone over the run of ``precedents`` (a system of the precedent
    task), ``depth`` per topic; ``exclude``: per query, judgments the bridge must not read."""
    def rank(topics: Mapping[str, str]) -> Run:
        run = precedents(topics)
        return {qid: bridge.rank([doc for doc, _ in run.get(qid, [])],
                                 exclude.get(qid, ()))[:depth] for qid in topics}
    return rank


class StatuteSearch:
    """The statute task's search: the statutes' own pipeline (direct) fused with the bridge.

    A filter narrows the precedents the bridge reads (statutes carry no year, bench or outcome);
    ``exclude`` names judgments the bridge must not read.
    """

    def __init__(self, statutes, precedents=None, bridge: StatuteBridge | None = None,
                 weights: dict[str, float] | None = None, rrf_k: int = 60) -> None:
        self.statutes, self.precedents, self.bridge = statutes, precedents, bridge
        self.weights = weights or {"direct": 1.0, "precedents": 1.0}
        self.rrf_k = rrf_k
        table = statutes.chunks
        self._first_chunk = table.drop_duplicates("doc_id").set_index("doc_id")["chunk_id"]

    def search(self, query: str, filters=None, k: int | None = None, exclude: Iterable[str] = ()):
        k = k or self.statutes.params.k
        direct = self.statutes.search(query, None, k=len(self._first_chunk))
        if self.bridge is None or self.precedents is None:
            return RetrievalResult(query, direct.chunks[:k], direct.documents[:k],
                                   direct.prefiltered, direct.timings_ms)
        excluded = list(exclude)
        precedents = self.precedents.search(query, filters, k=self.bridge.depth + len(excluded))
        bridged = self.bridge.rank([h.doc_id for h in precedents.documents], excluded)
        fused = fuse_statute_rankings([h.doc_id for h in direct.documents],
                                      [s for s, _ in bridged], self.weights, self.rrf_k)
        by_id = {h.doc_id: h for h in direct.documents}
        bridge_score = dict(bridged)
        hits = []
        for rank, (statute_id, score) in enumerate(fused[:k], start=1):
            if statute_id in by_id:
                hit = by_id[statute_id]
            else:  # reached through the precedents only: its first chunk stands for it
                row = self.statutes.chunks.iloc[self.statutes.row_of[self._first_chunk[statute_id]]]
                hit = Hit(0, row["chunk_id"], statute_id, row["text"], row["source_path"],
                          int(row["page_number"]), row["section_type"], {}, {})
            scores = {**hit.scores, "statute_rrf": score}
            if statute_id in bridge_score:
                scores["precedents"] = bridge_score[statute_id]
            hits.append(hit.at(rank, scores))
        timings = {**{f"statutes_{k}": v for k, v in direct.timings_ms.items()},
                   "precedents": precedents.timings_ms["total"]}
        timings["total"] = direct.timings_ms["total"] + precedents.timings_ms["total"]
        return RetrievalResult(query, direct.chunks[:k], hits, precedents.prefiltered, timings)
