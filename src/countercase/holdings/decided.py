"""Which provisions a judgment decides, learned: a logistic model over where and how the
judgment cites each provision, fitted on the development half of the labelled sample
(``data/gold/holding_profiles.jsonl``) and chosen there (``configs/holdings_choice.yaml``).

The first rule (:mod:`.profile`, a decision cue or two sentences of the reasons) reached
precision 0.57 and recall 0.51 on the whole sample; the labels showed why: a sentence of the
reasons often narrates a lower court's conviction, restates counsel, or reports another case,
and "s." and "u/s." ended sentences early. The features say that in numbers.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from countercase.extract.act_sections import SectionMention
from countercase.extract.segment import Segment

FEATURES = ("log_mentions", "log_in_reasons", "log_cue_sentences", "share_second_half",
            "share_in_facts", "most_cited", "log_provisions", "share_other_cases",
            "share_narrated", "in_held", "constitution", "not_in_reasons")
REASONS = ("Ratio", "Held")
_SENTENCE = re.compile(r"(?<=[.;:!?])\s+(?=[\"'(A-Z0-9])")
# a full stop that ends an abbreviation, not a sentence ("u/s. 302", "Art. 21", "Mr. X")
_ABBREVIATION = re.compile(
    r"(?:\b(?:u/s|u/ss|r/w|s|ss|sec|secs|art|arts|no|nos|cl|o|r|vs|v|viz|i\.e|e\.g|cr|crl|p\.c|"
    r"dr|mr|mrs|ms|smt|sh|shri|hon'?ble|supra)\.|\b[A-Z]\.)$", re.I)
# a sentence that reports another case or a court below, or restates a party's argument
OTHER_CASE = re.compile(
    r"\b(?:SCR|SCC|AIR|Indlaw|supra|Cri\s*LJ|All\s*ER|case\b|held\s+by\s+this\s+court|this\s+"
    r"court\s+(?:has\s+)?held|observed)\b|\bIn\s+[A-Z][\w.]*(?:\s+[A-Z][\w.]*)*\s+v\.", re.I)
NARRATED = re.compile(
    r"\b(?:learned\s+counsel|contended|contention|submitted|submission|urged|argued|trial\s+"
    r"court|sessions\s+(?:court|judge)|high\s+court|tribunal|was\s+charged|were\s+charged|"
    r"charge[- ]?sheet|F\.?I\.?R)\b", re.I)
CUE = re.compile(
    r"\b(?:convict\w*|acquit\w*|guilty|offences?\s+(?:under|punishable)|punishable|"
    r"charged?\s+(?:under|with)|sentenced?|attract\w*|appl(?:y|ies|ied|icable|icability)|"
    r"invok\w*|ultra\s+vires|intra\s+vires|unconstitutional|constitutional\s+validity|"
    r"violat\w*|contraven\w*|infring\w*|struck\s+down|(?:falls?|fell|come|comes|came)\s+"
    r"(?:within|under)|covered\s+by|ingredients?|made\s+out|mandatory|barred|"
    r"(?:benefit|protection)\s+of|entitled\s+(?:to|under)|in\s+terms\s+of|"
    r"(?:we|court)\s+(?:hold|held)|interpret\w*|constru\w*|meaning\s+of|scope\s+of)", re.I)


def sentences(text: str, segments: Iterable[Segment]) -> list[tuple[int, int]]:
    """The segments' sentences as offsets into ``text``, abbreviations kept inside."""
    out = []
    for seg in segments:
        start = seg.start
        for m in _SENTENCE.finditer(text, seg.start, seg.end):
            if _ABBREVIATION.search(text[max(start, m.start() - 12):m.start()]):
                continue
            if m.start() > start:
                out.append((start, m.start()))
            start = m.end()
        if seg.end > start:
            out.append((start, seg.end))
    return out


def features(text: str, segments: Sequence[Segment],
             mentions: Sequence[SectionMention]) -> dict[str, list[float]]:
    """Each cited provision's feature vector (:data:`FEATURES`)."""
    reasons = [s for s in segments if s.section_type in REASONS]
    held = [s for s in segments if s.section_type == "Held"]
    facts = [s for s in segments if s.section_type == "Facts"]
    sents = sentences(text, reasons)
    counts = Counter(m.section_id for m in mentions)
    top = max(counts.values(), default=0)
    inside = lambda pos, segs: any(s.start <= pos < s.end for s in segs)  # noqa: E731
    out = {}
    for sid, n in counts.items():
        starts = [m.start for m in mentions if m.section_id == sid]
        in_reasons = cues = other = narrated = 0
        for a, b in sents:
            k = sum(1 for s in starts if a <= s < b)
            if not k:
                continue
            piece = text[a:b]
            in_reasons += k
            o, r = bool(OTHER_CASE.search(piece)), bool(NARRATED.search(piece))
            other, narrated = other + o, narrated + r
            cues += bool(CUE.search(piece)) and not o and not r
        out[sid] = [math.log1p(n), math.log1p(in_reasons), math.log1p(cues),
                    sum(s > len(text) / 2 for s in starts) / n,
                    sum(inside(s, facts) for s in starts) / n, float(n == top),
                    math.log1p(len(counts)), other / max(in_reasons, 1),
                    narrated / max(in_reasons, 1), float(any(inside(s, held) for s in starts)),
                    float(sid.startswith("Constitution")), float(in_reasons == 0)]
    return out


@dataclass(frozen=True)
class Scorer:
    weights: tuple[float, ...]  # one per feature, then the intercept
    threshold: float  # decided at or above it (the development half's best F1)
    precise: float  # the threshold whose development precision is at least 0.8

    def score(self, vector: Sequence[float]) -> float:
        z = float(np.dot(self.weights[:-1], vector) + self.weights[-1])
        return 1 / (1 + math.exp(-z))


def fit(X: np.ndarray, y: np.ndarray, l2: float = 1.0) -> tuple[float, ...]:
    """L2-regularised logistic regression (the intercept unpenalised), deterministic."""
    Xb = np.hstack([X, np.ones((len(X), 1))])

    def loss(w):
        p = 1 / (1 + np.exp(-(Xb @ w)))
        return (-np.sum(y * np.log(p + 1e-9) + (1 - y) * np.log(1 - p + 1e-9))
                + l2 * np.sum(w[:-1] ** 2))

    return tuple(round(float(v), 6) for v in minimize(loss, np.zeros(Xb.shape[1]),
                                                      method="L-BFGS-B").x)


def split(docs: Sequence[str], seed: int) -> tuple[list[str], list[str]]:
    """The labelled sample's development and test halves (seeded)."""
    dev = set(random.Random(seed).sample(sorted(docs), len(docs) // 2))
    return sorted(dev), sorted(set(docs) - dev)


def choose(vectors: dict[str, dict[str, list[float]]], labels: dict[tuple[str, str], bool],
           dev: Sequence[str]) -> Scorer:
    """Fit on the development half; its thresholds from leave-one-judgment-out scores there:
    the best F1 (counting the labeller's added provisions as misses) and the lowest whose
    precision is at least 0.8."""
    def rows(docs):
        keys = [(d, s) for d in docs for s in sorted(vectors[d]) if (d, s) in labels]
        return (np.array([vectors[d][s] for d, s in keys]).reshape(len(keys), len(FEATURES)),
                np.array([labels[k] for k in keys], float), keys)

    truth = {k for k, v in labels.items() if v and k[0] in set(dev)}
    scored = []
    for doc in dev:
        X, y, _ = rows([d for d in dev if d != doc])
        w = Scorer(fit(X, y), 0.5, 0.5)
        scored += [(w.score(vectors[doc][s]), (doc, s)) for s in sorted(vectors[doc])
                   if (doc, s) in labels]
    grid = [round(0.2 + 0.05 * i, 2) for i in range(15)]

    def at(th):
        said = {k for s, k in scored if s >= th}
        hit = len(said & truth)
        return (hit / len(said) if said else 0.0), hit / max(len(truth), 1), len(said)

    best = max(grid, key=lambda th: (2 * at(th)[0] * at(th)[1] / max(at(th)[0] + at(th)[1], 1e-9)))
    precise = min((th for th in grid if at(th)[0] >= 0.8 and at(th)[2] > 0), default=grid[-1])
    X, y, _ = rows(dev)
    return Scorer(fit(X, y), best, precise)
