"""Judgment-to-judgment citations mined from the texts, resolved to the corpus documents they name.

Every AILA case document begins with its own title ("Masud Khan v State Of Uttar Pradesh"), and
judgments cite other cases by name, often followed by a reporter citation: "In Gurbachan Singh
v. State of Punjab, AIR 1957 SC 623", "Rattan Arya v. State of Tamil Nadu, (1986) 3 SCC 385",
"[1962] Supp. 3 S.C.R. 1", "2010 Indlaw SC 570". The corpus documents carry no reporter citation of their own, so:

1. **case names**: every " v. " in a judgment's body is a possible citation. The words before
   it must end with a corpus title's petitioner, the words after it must begin with that
   title's respondent (both normalised: lower case, state abbreviations spelt out, "and
   others"/"Ors."/"M/s." and punctuation dropped). The longest match wins; several corpus
   documents with the same title are told apart by the year printed in a reporter citation
   right after the name, else the mention is *ambiguous* (counted, not used).
2. **reporter citations** (AIR, SCC, SCR, Indlaw, other reporters): a citation printed right after a
   resolved name names that document; this map then resolves the same citation printed
   elsewhere without the name. A citation never seen next to a resolved name stays unresolved.

A judgment never cites itself: its own title (first line) is skipped, and a match to itself is
dropped. Only documents with a title (the AILA header) can be cited; the PDFs' cause titles are
read by the extract stage and are not used here.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

# " v. " between parties; an upper-case "V." is an initial ("T. V. Vatheeswaran").
_VERSUS = re.compile(r"\s(?:v\.?|vs\.?|Vs\.?|versus)\s", re.M)
REPORTERS = {
    "AIR": re.compile(r"\bA\.?\s?I\.?\s?R\.?\s*(?P<year>1[89]\d\d|20[0-2]\d)\s+S\.?\s?C\.?\s+(?P<page>\d{1,4})\b"),
    "SCC": re.compile(r"\((?P<year>1[89]\d\d|20[0-2]\d)\)\s*(?P<vol>\d{1,2})?\s*S\.?\s?C\.?\s?C\.?"
                      r"\s*(?:\((?:Cri|L&S|Tax)\)\s*)?(?P<page>\d{1,4})\b"),
    "SCR": re.compile(r"\[(?P<year>1[89]\d\d|20[0-2]\d)\]\s*(?P<supp>Supp(?:l)?\.?\s*)?(?P<vol>\d{1,2})?"
                      r"\s*S\.?\s?C\.?\s?R\.?\s*(?P<page>\d{1,4})\b"),
    "other": re.compile(r"\b(?:JT\s*(?P<year>1[89]\d\d|20[0-2]\d)\s*\((?P<vol>\d+)\)\s*SC\s*(?P<page>\d+)"
                        r"|(?P<year2>1[89]\d\d|20[0-2]\d)\s*\((?P<vol2>\d+)\)\s*SCALE\s*(?P<page2>\d+)"
                        r"|(?P<year3>1[89]\d\d|20[0-2]\d)\s+Cri\.?\s?L\.?\s?J\.?\s*(?P<page3>\d+))", re.I),
    # the Indlaw number printed after most citations in this corpus: one number per judgment
    "Indlaw": re.compile(r"\b(?P<year>1[89]\d\d|20[0-2]\d)\s+Indlaw\s+SC\s*(?P<page>\d+)\b", re.I),
}
# State abbreviations as printed in case names ("State of U.P.", "State of M. P.", "J&K").
_ABBREVIATIONS = {"up": "uttar pradesh", "mp": "madhya pradesh", "ap": "andhra pradesh",
                  "hp": "himachal pradesh", "wb": "west bengal", "tn": "tamil nadu",
                  "jk": "jammu kashmir", "uoi": "union of india"}
_ABBREVIATION = re.compile(r"(?<![a-z])(?:([umahwt])\s?\.\s?([pbn])(?![a-z])\.?|(j)\s?\.?\s?&\s?(k)(?![a-z])\.?)")
_FILLER = {"and", "others", "other", "ors", "anr", "another", "etc", "the", "ms", "messrs", "mls",
           "ltd", "limited", "pvt", "private", "co", "company", "through", "its", "by", "lrs",
           "rs", "dead", "thr", "state", "govt", "government", "of"}
# a mention's name is read from this much text either side of " v. "
_WINDOW = 120
_MIN_NAME_TOKENS = 1  # after fillers are dropped, each side must keep a word


def name_tokens(name: str, initials: bool = False) -> list[str]:
    """The words of a party name that tell it apart (fillers dropped), abbreviations spelt out.

    "State of U.P. and others" -> ["uttar", "pradesh"]; "M/s. Titaghur Paper Mills Co. Ltd."
    -> ["titaghur", "paper", "mills"]. Initials are printed inconsistently ("M.R. Balaji",
    "Balaji"): they are kept only with ``initials``, for :func:`_initials_agree`.
    """
    text = name.lower()
    text = _ABBREVIATION.sub(lambda m: f" {_ABBREVIATIONS.get(''.join(g for g in m.groups() if g), m.group(0))} ", text)
    words = [w for w in re.findall(r"[a-z]+", text) if w not in _FILLER]
    return words if initials else [w for w in words if len(w) > 1]


def _initials_before(words: list[str], n_core: int) -> tuple[str, ...]:
    """The initials among the last ``n_core`` full words of ``words`` and right before them."""
    seen, i = 0, len(words)
    while i > 0 and seen < n_core:
        i -= 1
        seen += len(words[i]) > 1
    while i > 0 and len(words[i - 1]) == 1:
        i -= 1
    return tuple(w for w in words[i:] if len(w) == 1)


def split_title(title: str) -> tuple[str, str] | None:
    parts = _VERSUS.split(f" {title.strip()} ", maxsplit=1)
    if len(parts) != 2:
        return None
    return parts[0].strip(), parts[1].strip()


@dataclass(frozen=True)
class Title:
    doc_id: str
    title: str
    year: int | None
    petitioner: tuple[str, ...]
    respondent: tuple[str, ...]
    initials: tuple[str, ...] = ()  # of the petitioner ("A. K. Roy": a, k)


@dataclass
class Citation:
    citing: str  # doc id of the judgment that cites
    kind: str  # "case_name", "AIR", "SCC", "SCR", "Indlaw", "other"
    text: str  # the citation as printed (the name, or the reporter citation)
    start: int  # offset in the citing text
    cited: str | None = None  # doc id, when resolved
    status: str = "unresolved"  # "resolved", "unresolved", "ambiguous"
    candidates: list[str] = field(default_factory=list)  # for ambiguous ones

    def to_dict(self) -> dict:
        return asdict(self)


def read_title(doc_id: str, text: str, year: int | None = None) -> Title | None:
    """The AILA header's first line as a title, or None (a PDF, or no " v " in it)."""
    first = text.lstrip().split("\n", 1)[0].strip()
    parts = split_title(first) if len(first) < 300 else None
    if not parts:
        return None
    pet, res = name_tokens(parts[0]), name_tokens(parts[1])
    if len(pet) < _MIN_NAME_TOKENS or len(res) < _MIN_NAME_TOKENS:
        return None
    full = name_tokens(parts[0], initials=True)
    return Title(doc_id, first, year, tuple(pet), tuple(res), _initials_before(full, len(pet)))


def reporter_key(kind: str, match: re.Match) -> str:
    """One spelling per citation: "AIR 1973 SC 947", "(1979) 2 SCC 12", "[1962] Supp 3 SCR 1"."""
    g = {k: v for k, v in match.groupdict().items() if v}
    year = g.get("year") or g.get("year2") or g.get("year3")
    page = g.get("page") or g.get("page2") or g.get("page3")
    vol = g.get("vol") or g.get("vol2") or ""
    if kind == "Indlaw":
        return f"{year} Indlaw SC {int(page)}"
    if kind == "AIR":
        return f"AIR {year} SC {int(page)}"
    if kind == "SCC":
        return f"({year}) {vol} SCC {int(page)}".replace("  ", " ")
    if kind == "SCR":
        supp = "Supp " if g.get("supp") else ""
        return f"[{year}] {supp}{vol} SCR {int(page)}".replace("  ", " ")
    return re.sub(r"\s+", " ", match.group(0)).strip()


def _year_of(key: str) -> int:
    return int(re.search(r"(1[89]|20)\d\d", key).group(0))


class CitationResolver:
    """Resolves the citations in judgments' texts to the corpus documents they name."""

    def __init__(self, titles: Iterable[Title]) -> None:
        self.titles = list(titles)
        # last petitioner word -> titles: a mention is checked only against these
        self._by_last: dict[str, list[Title]] = defaultdict(list)
        for title in self.titles:
            self._by_last[title.petitioner[-1]].append(title)
        self.reporter_map: dict[str, str] = {}

    def _name_candidates(self, left: str, right: str) -> list[Title]:
        before, after = name_tokens(left), name_tokens(right)
        if not before or not after:
            return []
        full_before = name_tokens(left, initials=True)
        best, best_len = [], 0
        for title in self._by_last.get(before[-1], ()):
            n, m = len(title.petitioner), len(title.respondent)
            if tuple(before[-n:]) != title.petitioner or tuple(after[:m]) != title.respondent:
                continue
            printed = _initials_before(full_before, n)
            # "A.K. Roy" is not "P. B. Roy"; a name printed without initials may be either
            if printed and title.initials and printed != title.initials:
                continue
            if n + m > best_len:
                best, best_len = [title], n + m
            elif n + m == best_len:
                best.append(title)
        return best

    def mentions(self, doc_id: str, text: str) -> list[Citation]:
        """Every case-name and reporter citation in ``text``, names resolved (pass 1)."""
        body_start = text.find("\n", len(text) - len(text.lstrip())) + 1  # skip the own title
        citations: list[Citation] = []
        for match in _VERSUS.finditer(text, body_start):
            left = text[max(body_start, match.start() - _WINDOW):match.start()]
            # a name does not run over a sentence end or a line break
            left = re.split(r"\n|(?<=[a-z]{3})\.\s|;|:", left)[-1]
            right = text[match.end():match.end() + _WINDOW].split("\n", 1)[0]
            candidates = [t for t in self._name_candidates(left, right) if t.doc_id != doc_id]
            if not candidates:
                if name_tokens(left) and name_tokens(right):
                    name = f"{left.strip()[-60:]} v. {right.strip()[:60]}"
                    citations.append(Citation(doc_id, "case_name", name, match.start()))
                continue
            # a reporter citation within the next 160 characters dates the cited judgment
            years = {_year_of(reporter_key(k, m)) for k, rx in REPORTERS.items()
                     for m in rx.finditer(text[match.end():match.end() + 160])}
            if len(candidates) > 1 and years:
                dated = [t for t in candidates if t.year in years]
                candidates = dated or candidates
            first = candidates[0]
            name = f"{' '.join(first.petitioner)} v. {' '.join(first.respondent)}"
            if len({t.doc_id for t in candidates}) == 1:
                citations.append(Citation(doc_id, "case_name", name, match.start(),
                                          first.doc_id, "resolved"))
            else:
                citations.append(Citation(doc_id, "case_name", name, match.start(), None,
                                          "ambiguous", sorted(t.doc_id for t in candidates)))
        for kind, rx in REPORTERS.items():
            for m in rx.finditer(text, body_start):
                citations.append(Citation(doc_id, kind, reporter_key(kind, m), m.start()))
        citations.sort(key=lambda c: (c.start, c.kind))
        return citations

    def learn_reporters(self, citations: list[Citation], text_of: dict[str, str]) -> None:
        """A reporter citation printed within 160 characters after a resolved name (and before
        the next " v. ") names that document; a citation seen with two documents is dropped."""
        seen: dict[str, set[str]] = defaultdict(set)
        by_doc: dict[str, list[Citation]] = defaultdict(list)
        for c in citations:
            by_doc[c.citing].append(c)
        for doc_cites in by_doc.values():
            names = [c for c in doc_cites if c.kind == "case_name"]
            for c in doc_cites:
                if c.kind == "case_name":
                    continue
                before = [n for n in names if n.start < c.start]
                if before and before[-1].status == "resolved" and c.start - before[-1].start <= 160 + _WINDOW:
                    seen[c.text].add(before[-1].cited)
        self.reporter_map = {key: next(iter(docs)) for key, docs in sorted(seen.items())
                             if len(docs) == 1}

    def resolve_reporters(self, citations: list[Citation]) -> None:
        for c in citations:
            if c.kind != "case_name" and c.text in self.reporter_map:
                cited = self.reporter_map[c.text]
                if cited != c.citing:
                    c.cited, c.status = cited, "resolved"


def mine_citations(documents: Iterable[tuple[str, str, int | None]]) -> tuple[list[Citation], list[Title]]:
    """All citations of all ``(doc id, text, year)`` documents, resolved where possible."""
    docs = list(documents)
    titles = [t for t in (read_title(d, text, year) for d, text, year in docs) if t is not None]
    resolver = CitationResolver(titles)
    citations: list[Citation] = []
    for doc_id, text, _ in docs:
        citations.extend(resolver.mentions(doc_id, text))
    resolver.learn_reporters(citations, {d: t for d, t, _ in docs})
    resolver.resolve_reporters(citations)
    return citations, titles


def resolution_counts(citations: list[Citation]) -> dict[str, dict[str, int]]:
    """Kind of citation -> how many of that kind resolved to each status (the reranker's
    metrics; the citation prior's counts are :func:`countercase.retrieve.prior.citation_counts`)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for c in citations:
        counts[c.kind][c.status] += 1
    return {kind: dict(sorted(counter.items())) for kind, counter in sorted(counts.items())}


def cited_pairs(citations: list[Citation]) -> dict[str, list[str]]:
    """citing doc id -> the distinct corpus documents it cites (in order of first mention)."""
    pairs: dict[str, list[str]] = defaultdict(list)
    for c in citations:
        if c.status == "resolved" and c.cited not in pairs[c.citing]:
            pairs[c.citing].append(c.cited)
    return dict(sorted(pairs.items()))
