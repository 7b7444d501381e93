"""The learned ranker's candidates and features (issue 43; the rule: ``configs/ltr_rule.yaml``).

A query's candidate pool is the union of the top ``pool_depth`` judgments of chunk BM25 (pooled
by max), of BM25 over whole judgments at the tuned ``k1``/``b`` and of the dense ranking (the
packaged encoder, a judgment at its best chunk), in that order, each under the query's limit.
Every pair (query, candidate) gets the features of :data:`FEATURES`, each defined in one line
there, in three groups: text, citation and fact sheet. A value that cannot be known is NaN
(LightGBM's missing value), never 0 standing in for a count: a candidate without a fact sheet,
a query whose facts yield no sheet, a query without a year.

The retrieval scores (:data:`SCALED`) are min-max scaled over the query's pool, as LETOR's
QueryLevelNorm scales its features: a raw BM25 score grows with the query's length, and a ranker
whose trees split on raw scores learnt from 1,500-character queries misreads a query twice as
long (the amendment in the rule file).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from countercase import layout
from countercase.config import ConfigError, read_section
from countercase.datasets.limits import Limit
from countercase.factsheet.rules import extract_rules
from countercase.factsheet.schema import FactSheet, validate_sheet
from countercase.factsheet.values import sheet_values
from countercase.index.bm25 import Bm25Searcher
from countercase.index.dense import DenseIndex, read_meta
from countercase.index.encoders import embed, load_encoder
from countercase.index.facts import FactSearcher
from countercase.index.query_terms import EmptyQueryError
from countercase.layout import IndexPaths
from countercase.retrieve.choices import Choices
from countercase.retrieve.filters import lucene_filter
from countercase.retrieve.load import MissingIndexError

# name -> (group, definition)
FEATURES: dict[str, tuple[str, str]] = {
    "bm25_chunk_max": ("text", "the highest BM25 score (k1 0.9, b 0.4) of the judgment's chunks "
                               "among the query's top chunk hits (NaN: none of its chunks there)"),
    "bm25_chunk_sum2": ("text", "the sum of its two highest chunk BM25 scores among those hits"),
    "bm25_doc": ("text", "BM25 over the whole judgment at the tuned k1, b (0: no query term)"),
    "dense_max": ("text", "the highest cosine of the query's embedding with the judgment's chunks "
                          "(the packaged encoder)"),
    "query_words": ("text", "log(1 + the query's words)"),
    "doc_chunks": ("text", "log(1 + the judgment's chunks), its length"),
    "prior": ("citation", "log(1 + how often the judgments a search for the query may see cite "
                          "it), never the query's own citations"),
    "year_gap": ("citation", "the query's year minus the judgment's (NaN: a year unknown)"),
    "fact_bm25": ("facts", "BM25 of the query sheet's legal-fact tokens against the judgment's "
                           "(the fact channel; 0: no token shared)"),
    "sections_shared": ("facts", "canonical sections both sheets cite"),
    "sections_idf": ("facts", "the shared sections' summed IDF over the judgments' sheets"),
    "acts_shared": ("facts", "acts both sheets cite a section of"),
    "chapters_shared": ("facts", "statute chapters both sheets cite a section of"),
    "evidence_shared": ("facts", "evidence types both sheets hold"),
    "petitioner_same": ("facts", "1 when the petitioners' types agree, 0 when not (NaN: one "
                                 "unknown)"),
    "respondent_same": ("facts", "1 when the respondents' types agree, 0 when not (NaN: one "
                                 "unknown)"),
    "ages_agree": ("facts", "the share of age-threshold sides the sheets share, of those either "
                            "states (NaN: one states no age)"),
    "amounts_agree": ("facts", "the same for the amount thresholds"),
    "durations_agree": ("facts", "the same for the duration thresholds"),
    "outcome_same": ("facts", "1 when the outcomes agree, 0 when not (NaN: one unknown)"),
    # applicability (issue 57): the query's facts against what the judgment's holding turns on
    # (its holding profile, stage holdings); NaN: no profile, or the query states no such fact
    "held_decided": ("holdings", "sections of the query's sheet the judgment's reasons decide"),
    "held_decided_idf": ("holdings", "their summed IDF over the profiles' decided provisions"),
    "held_mentioned": ("holdings", "sections of the query's sheet the judgment only mentions"),
    "held_evidence": ("holdings", "evidence types of the query's sheet its reasons weigh"),
    "held_parties": ("holdings", "party types of the query's sheet its reasons name"),
    "held_boundaries": ("holdings", "the share of the query's threshold sides its reasons hold"),
}
GROUPS = ("text", "citation", "facts", "holdings")
# the first-stage lists a pool is the union of (configs/ltr_rule.yaml candidates.pool); a pool
# without dense is configs/dense_rule.yaml's comparison
POOL_SOURCES = ("chunk_bm25", "doc_bm25", "dense")
# scaled to [0, 1] over the query's pool: (x - min) / (max - min); 0 where the pool's values are
# equal, NaN kept
SCALED = ("bm25_chunk_max", "bm25_chunk_sum2", "bm25_doc", "dense_max", "fact_bm25")
_KINDS = {"sections": "fsec", "acts": "fact", "chapters": "fchap", "evidence": "fev"}
_SIDES = {"ages": "fage", "amounts": "famt", "durations": "fdur"}


_SETTINGS = {"pool_depth": int, "chunk_hits": int, "folds": int, "grid": dict, "fixed": dict,
             "max_rounds": int, "early_stopping_rounds": int, "serve_margin": float,
             "learning_curve": list}


def read_settings(path: Path = layout.LTR_RULE) -> dict:
    """The ``settings`` of the learned ranker's rule file, each of its type (the pool and the
    features' depths here; the grid and the stopping in :mod:`countercase.ltr.train`)."""
    found = read_section(path, "settings", "the learned ranker's rule")
    wrong = [key for key, kind in _SETTINGS.items()
             if not isinstance(found.get(key), kind if kind is not float else (int, float))
             or isinstance(found.get(key), bool)]
    if wrong:
        raise ConfigError(f"{path}: settings {', '.join(wrong)} missing or not "
                          f"{', '.join(_SETTINGS[k].__name__ for k in wrong)}")
    return found


def scaled(frame: pd.DataFrame, pool: int | None = None) -> pd.DataFrame:
    """``frame`` (one query's pool) with each of :data:`SCALED` min-max scaled over its rows,
    or over its first ``pool`` rows (rows after them, judgments outside the pool, are scaled by
    the pool's bounds and may fall outside [0, 1])."""
    out = frame.copy()
    for name in SCALED:
        column = out[name]
        bounds = column.iloc[:pool] if pool is not None else column
        low, high = bounds.min(), bounds.max()
        out[name] = (column - low) / (high - low) if high > low else column * 0.0
    return out


def names(drop: Iterable[str] = ()) -> list[str]:
    """The features of every group but ``drop``, in :data:`FEATURES`' order."""
    dropped = set(drop)
    unknown = dropped - set(GROUPS)
    if unknown:
        raise ValueError(f"unknown feature group(s) {sorted(unknown)}: use {', '.join(GROUPS)}")
    return [name for name, (group, _) in FEATURES.items() if group not in dropped]


@dataclass(frozen=True)
class Sheet:
    """What the fact features read of a sheet: its tokens (``countercase.index.facts``), its
    party types and its outcome."""

    terms: tuple[str, ...]  # in the sheet's order, repeated as it repeats them
    petitioner: str
    respondent: str
    outcome: str
    values: frozenset[str] = frozenset()  # countercase.factsheet.values' keys

    @classmethod
    def of(cls, sheet: FactSheet, tokens: Iterable[str]) -> "Sheet":
        return cls(tuple(tokens), sheet.parties.petitioner.type,
                   sheet.parties.respondent.type, sheet.outcome, sheet_values(sheet))

    @property
    def tokens(self) -> frozenset[str]:
        return frozenset(self.terms)


def _same(a: str, b: str) -> float:
    return math.nan if "Unknown" in (a, b) else float(a == b)


def fact_features(query: Sheet | None, doc: Sheet | None, idf: Mapping[str, float]) -> dict:
    """The fact-sheet group for one pair (NaN throughout when either sheet is missing)."""
    out = {name: math.nan for name, (group, _) in FEATURES.items()
           if group == "facts" and name != "fact_bm25"}
    if query is None or doc is None:
        return out
    shared = query.tokens & doc.tokens
    for kind, prefix in _KINDS.items():
        out[f"{kind}_shared"] = float(sum(t.startswith(prefix) for t in shared))
    # summed in a fixed order: a set's order changes with each process's string hashing, and
    # floating point sums with it (a model retrained on the same pairs would differ)
    out["sections_idf"] = float(sum(idf.get(t, 0.0) for t in sorted(shared)
                                    if t.startswith("fsec")))
    out["petitioner_same"] = _same(query.petitioner, doc.petitioner)
    out["respondent_same"] = _same(query.respondent, doc.respondent)
    for kind, prefix in _SIDES.items():
        a = {t for t in query.tokens if t.startswith(prefix)}
        b = {t for t in doc.tokens if t.startswith(prefix)}
        out[f"{kind}_agree"] = len(a & b) / len(a | b) if a and b else math.nan
    out["outcome_same"] = _same(query.outcome, doc.outcome)
    return out


@dataclass(frozen=True)
class Holding:
    """What the applicability features read of a judgment's holding profile, as
    :mod:`countercase.factsheet.values`' keys."""

    decided: frozenset[str]
    mentioned: frozenset[str]
    others: frozenset[str]  # evidence, party and boundary keys


def read_holdings(path: Path) -> dict[str, Holding]:
    """The holding profiles (stage holdings' ``profiles.jsonl``) by judgment; none: {}."""
    found: dict[str, Holding] = {}
    if not Path(path).is_file():
        return found
    with Path(path).open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            held = row["held"]
            found[row["doc_id"]] = Holding(
                frozenset(f"section:{h['value']}" for h in held
                          if h["kind"] == "provision" and h["role"] == "decided"),
                frozenset(f"section:{h['value']}" for h in held
                          if h["kind"] == "provision" and h["role"] != "decided"),
                frozenset(f"{h['kind'] if h['kind'] != 'provision' else 'section'}:{h['value']}"
                          for h in held if h["kind"] != "provision"))
    return found


def holding_features(query: Sheet | None, doc: Holding | None,
                     idf: Mapping[str, float]) -> dict:
    """The applicability group for one pair (NaN throughout when the query has no sheet or the
    judgment no profile)."""
    out = {name: math.nan for name, (group, _) in FEATURES.items() if group == "holdings"}
    if query is None or doc is None:
        return out
    sections = {v for v in query.values if v.startswith("section:")}
    decided = sections & doc.decided
    out["held_decided"] = float(len(decided))
    out["held_decided_idf"] = float(sum(idf.get(v, 0.0) for v in sorted(decided)))
    out["held_mentioned"] = float(len(sections & doc.mentioned))
    for name, prefix in (("held_evidence", "evidence:"), ("held_parties", "party:")):
        out[name] = float(sum(v.startswith(prefix) for v in query.values & doc.others))
    sides = {v for v in query.values if v.startswith("boundary:")}
    out["held_boundaries"] = len(sides & doc.others) / len(sides) if sides else math.nan
    return out


def pool_sources(sources: tuple[str, ...]) -> tuple[str, ...]:
    """``sources`` checked against :data:`POOL_SOURCES` (a :class:`ValueError` naming them)."""
    unknown = sorted(set(sources) - set(POOL_SOURCES))
    if unknown or not sources:
        raise ValueError(f"pool sources {unknown or '(none)'}: use some of "
                         f"{', '.join(POOL_SOURCES)}")
    return tuple(sources)


class FeatureSource:
    """The indexes and sheets the features read, opened once (:meth:`open`)."""

    def __init__(self, chunk_bm25, doc_bm25, dense, encoder, precision: str,
                 chunk_doc: Mapping[str, str], sheets: dict[str, Sheet], facts, years: dict,
                 pool_depth: int, chunk_hits: int,
                 holdings: Mapping[str, Holding] | None = None,
                 sources: tuple[str, ...] = POOL_SOURCES) -> None:
        self.chunk_bm25, self.doc_bm25, self.facts = chunk_bm25, doc_bm25, facts
        self.holdings = dict(holdings or {})
        decided = Counter(v for h in self.holdings.values() for v in h.decided)
        self.held_idf = {v: math.log(len(self.holdings) / n) for v, n in decided.items()}
        self.dense, self.encoder, self.precision = dense, encoder, precision
        self.sheets, self.years = sheets, years
        self.pool_depth, self.chunk_hits = pool_depth, chunk_hits
        self.sources = pool_sources(sources)
        self.doc_of = dict(chunk_doc)  # chunk -> its judgment
        self.doc_ids = sorted(set(self.doc_of.values()))
        position = {d: i for i, d in enumerate(self.doc_ids)}
        self._doc_row = np.array([position[self.doc_of[c]] for c in dense.ids])
        self.chunks_of = Counter(self.doc_of.values())
        df = Counter(t for s in sheets.values() for t in s.tokens if t.startswith("fsec"))
        self.idf = {t: math.log(len(sheets) / n) for t, n in df.items()}
        self.missing_sheets = 0  # candidates of the pairs computed that have no sheet
        # a query's pool and features, but the prior: the rankers reading one query share them
        self._frames: dict[tuple, pd.DataFrame] = {}

    @classmethod
    def open(cls, paths: IndexPaths, sheets: Path | None, k1: float, b: float, pool_depth: int,
             chunk_hits: int, sources: tuple[str, ...] = POOL_SOURCES) -> "FeatureSource":
        """Over the built indexes of ``paths`` and the judgments' sheets ``sheets``; ``k1``,
        ``b``: whole-judgment BM25's (the tune stage's choice). Without ``sheets`` (a collection
        that supplies none) the fact-sheet and holding groups are unknown (NaN), and so are the
        years where ``paths`` has no metadata."""
        pool_sources(sources)  # before anything is opened
        needed = [(paths.index_dir / "precedents_chunks", "BM25 index (stage index)")]
        if sheets is not None:
            needed += [(paths.fact_index, "fact index (stage index_facts)"),
                       (sheets, "fact sheets (stage factsheets)")]
        for path, what in needed:
            if not Path(path).exists():
                raise MissingIndexError(f"{what} not found: {path}")
        meta = read_meta(paths.dense_dir / "precedents")
        if meta is None:
            raise MissingIndexError(f"no embeddings in {paths.dense_dir / 'precedents'} "
                                    "(stage embed)")
        facts = FactSearcher(paths.fact_index) if sheets is not None else None
        found = {}
        if sheets is not None:
            with Path(sheets).open(encoding="utf-8") as handle:
                for line in handle:
                    sheet = validate_sheet(json.loads(line))
                    found[sheet.case_id] = Sheet.of(sheet, facts.tokens(sheet))
        table = pd.read_parquet(paths.chunks, columns=["chunk_id", "doc_id"])
        years = (pd.read_parquet(paths.metadata, columns=["doc_id", "year"])
                 if paths.metadata.is_file() else pd.DataFrame({"doc_id": [], "year": []}))
        precision = meta.get("precision", "float32")
        return cls(Bm25Searcher(paths.index_dir / "precedents_chunks"),
                   Bm25Searcher(paths.index_dir / "precedents_docs", k1=k1, b=b),
                   DenseIndex.load(paths.dense_dir / "precedents"),
                   load_encoder(meta["encoder"], precision=precision,
                                max_seq_length=meta.get("max_seq_length"),
                                int8_model=meta.get("int8_model")),
                   precision, dict(zip(table["chunk_id"], table["doc_id"])), found, facts,
                   {d: (None if pd.isna(y) else int(y)) for d, y in zip(years["doc_id"],
                                                                         years["year"])},
                   pool_depth, chunk_hits,
                   read_holdings(paths.holdings) if sheets is not None else {}, sources)

    @classmethod
    def chosen(cls, paths: IndexPaths, sheets: Path | None, choices: Choices,
               rule: Path = layout.LTR_RULE,
               sources: tuple[str, ...] = POOL_SOURCES) -> "FeatureSource":
        """:meth:`open` at the rule's depths and the tune stage's whole-judgment ``k1``, ``b``."""
        settings = read_settings(rule)
        return cls.open(paths, sheets, choices.get({"choice": "tuning.precedents.docs.k1"}),
                        choices.get({"choice": "tuning.precedents.docs.b"}),
                        settings["pool_depth"], settings["chunk_hits"], sources)

    def close(self) -> None:
        for searcher in (self.chunk_bm25, self.doc_bm25, self.facts):
            if searcher is not None:
                searcher.close()

    def cosines(self, text: str) -> np.ndarray:
        """The highest cosine of ``text``'s embedding with each judgment's chunks, in
        :attr:`doc_ids`' order."""
        vector = embed(self.encoder, [text], show_progress=False, precision=self.precision)[0]
        best = np.full(len(self.doc_ids), -np.inf, dtype=np.float32)
        np.maximum.at(best, self._doc_row, self.dense.matrix @ vector)
        return best

    def query_sheet(self, qid: str, text: str) -> Sheet | None:
        if self.facts is None:  # no sheets to set it against
            return None
        try:
            sheet = extract_rules(text, qid, "query")
        except ValueError:  # a text without facts to read: the group is unknown
            return None
        return Sheet.of(sheet, self.facts.tokens(sheet))

    def frame(self, qid: str, text: str, limit: Limit | None = None,
              cited: Mapping[str, int] | None = None,
              sheet: Sheet | None = None, extra: tuple[str, ...] = ()) -> pd.DataFrame:
        """The candidate pool of query ``qid`` (rows, in pool order) by :data:`FEATURES`;
        ``limit``: what a search for it may return; ``cited``: judgment -> how often the
        judgments it may see cite it (the prior); ``sheet``: its facts (default: the rule
        sheet of ``text``); ``extra``: judgments outside the pool given rows after it, scaled
        by the pool's bounds (the confirmatory experiment scores cited precedents wherever they
        rank)."""
        key = (qid, text, limit, sheet, extra)
        if key not in self._frames:
            self._frames[key] = self._frame(qid, text, limit, sheet, extra)
        frame = self._frames[key].copy()
        frame["prior"] = [math.log1p((cited or {}).get(doc, 0)) for doc in frame.index]
        return frame

    def _frame(self, qid: str, text: str, limit: Limit | None, sheet: Sheet | None,
               extra: tuple[str, ...] = ()) -> pd.DataFrame:
        limit = limit or Limit()
        filters = lucene_filter(limit if (limit.exclude or limit.year_to) else None)
        try:
            chunk_hits = self.chunk_bm25.search(text, self.chunk_hits, filters)
            doc_hits = self.doc_bm25.search(text, len(self.doc_ids), filters)
        except EmptyQueryError:
            chunk_hits, doc_hits = [], []
        chunk_scores: dict[str, list[float]] = {}
        for chunk, score in chunk_hits:
            chunk_scores.setdefault(self.doc_of[chunk], []).append(score)
        best = self.cosines(text)
        allowed = [i for i, d in enumerate(self.doc_ids)
                   if limit.admits(d, self.years.get(d))]
        dense_order = sorted(allowed, key=lambda i: (-best[i], i))[:self.pool_depth]
        lists = {"chunk_bm25": list(chunk_scores)[:self.pool_depth],
                 "doc_bm25": [d for d, _ in doc_hits[:self.pool_depth]],
                 "dense": [self.doc_ids[i] for i in dense_order]}
        pool = list(dict.fromkeys(d for name in self.sources for d in lists[name]))
        sheet = sheet if sheet is not None else self.query_sheet(qid, text)
        fact_scores = (dict(self.facts.bm25.search(" ".join(sheet.terms), len(self.doc_ids),
                                                   filters)) if sheet and sheet.terms else {})
        docs = dict(doc_hits)
        row_of = {d: i for i, d in enumerate(self.doc_ids)}
        year = self.years.get(qid)
        size = len(pool)
        inside = set(pool)
        pool += [d for d in dict.fromkeys(extra) if d in row_of and d not in inside]
        rows = []
        for doc in pool:
            scores = chunk_scores.get(doc, [])
            doc_sheet = self.sheets.get(doc)
            self.missing_sheets += doc_sheet is None
            doc_year = self.years.get(doc)
            rows.append({
                "bm25_chunk_max": scores[0] if scores else math.nan,
                "bm25_chunk_sum2": sum(scores[:2]) if scores else math.nan,
                "bm25_doc": docs.get(doc, 0.0),
                "dense_max": float(best[row_of[doc]]),
                "query_words": math.log1p(len(text.split())),
                "doc_chunks": math.log1p(self.chunks_of[doc]),
                "prior": math.nan,  # filled per call (frame)
                "year_gap": (year - doc_year if year is not None and doc_year is not None
                             else math.nan),
                "fact_bm25": (math.nan if sheet is None or doc_sheet is None
                              else fact_scores.get(doc, 0.0)),
                **fact_features(sheet, doc_sheet, self.idf),
                **holding_features(sheet, self.holdings.get(doc), self.held_idf)})
        return scaled(pd.DataFrame(rows, index=pd.Index(pool, name="doc_id"),
                                   columns=list(FEATURES), dtype=float), size)
