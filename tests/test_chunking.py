"""Token-based chunking with the encoder's own tokenizer, on real AILA judgments and a real PDF."""

from __future__ import annotations

import bisect
import re
from pathlib import Path

import pdfplumber
import pytest

from countercase.extract.chunking import (
    Chunk,
    chunk_document,
    chunk_documents,
    encoder_max_length,
    load_tokenizer,
    page_offsets,
    tokenizer_dir,
    truncation,
    truncation_by_size,
)
from countercase.extract.segment import Segment, segment
from countercase.ingest.document import Document, Page

ROOT = Path(__file__).resolve().parents[1]
AILA_TAR = "Object_casedocs.tar.gz"  # the documents' source path names the archive member
PDF = ROOT / "data" / "raw" / "pdfs" / "judgment_01.pdf"
SIZE, OVERLAP = 254, 32


def read_aila(aila_files, names: set[str] | None = None) -> list[Document]:
    return [Document(doc_id, "aila_text", f"{AILA_TAR}!Object_casedocs/{doc_id}.txt", [Page(0, text)])
            for doc_id, text in aila_files.casedocs(names).items()]


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer("all-MiniLM-L6-v2")


@pytest.fixture(scope="module")
def aila_sample(aila_files) -> dict[str, Document]:
    return {d.doc_id: d for d in read_aila(aila_files, {"C1", "C17", "C100", "C108", "C1011"})}


@pytest.fixture(scope="module")
def pdf_doc() -> Document:
    with pdfplumber.open(PDF) as pdf:
        pages = [Page(i, page.extract_text() or "") for i, page in enumerate(pdf.pages)]
    return Document("judgment_01", "pdf", str(PDF.relative_to(ROOT)), pages)


def token_spans(tokenizer, text: str) -> list[tuple[int, int]]:
    enc = tokenizer.encode(text, add_special_tokens=False)
    return [o for o in enc.offsets if o[1] > o[0]]


def check_chunks(doc: Document, chunks: list[Chunk], tokenizer, size: int, overlap: int) -> None:
    text = doc.text
    offsets = token_spans(tokenizer, text)
    starts = [o[0] for o in offsets]
    assert chunks
    assert sum(1 for _ in chunks) == len({c.chunk_id for c in chunks})
    for i, c in enumerate(chunks):
        assert c.index == i
        assert c.chunk_id == f"{doc.doc_id}_{i:04d}"
        assert re.fullmatch(rf"{re.escape(doc.doc_id)}_\d{{4}}", c.chunk_id)
        assert c.doc_id == doc.doc_id and c.source_path == doc.source_path
        assert c.text == text[c.char_start:c.char_end]
        assert 0 < c.n_tokens <= size
        # the count is the encoder's: the chunk's own text encodes to the same number of word pieces
        assert len(token_spans(tokenizer, c.text)) == c.n_tokens
        # and it is the number of the document's tokens inside the chunk
        assert bisect.bisect_left(starts, c.char_end) - bisect.bisect_left(starts, c.char_start) == c.n_tokens
    assert [c.chunk_id for c in chunks] == sorted(c.chunk_id for c in chunks)
    # the chunks cover the whole text: from its first token to its last, with no gap
    assert chunks[0].char_start == offsets[0][0]
    assert chunks[-1].char_end == offsets[-1][1]
    for a, b in zip(chunks, chunks[1:]):
        assert a.char_start < b.char_start
        if overlap:
            assert b.char_start < a.char_end, "consecutive chunks overlap"
            shared = bisect.bisect_left(starts, a.char_end) - bisect.bisect_left(starts, b.char_start)
            assert 0 < shared <= overlap
        else:
            assert a.char_end <= b.char_start and not text[a.char_end:b.char_start].strip()


def test_tokenizer_is_the_encoders(tokenizer) -> None:
    directory = tokenizer_dir("all-MiniLM-L6-v2")
    assert (directory / "tokenizer.json").is_file()
    same = load_tokenizer(directory)
    assert same.get_vocab_size() == tokenizer.get_vocab_size() == 30522
    assert encoder_max_length("all-MiniLM-L6-v2") == 256
    # no truncation and no padding (the shipped tokenizer.json pads and truncates to 128)
    long_text = "The appellant was convicted under section 302. " * 40
    enc = tokenizer.encode(long_text)
    assert len(enc.ids) > 128 and "[PAD]" not in enc.tokens
    assert enc.tokens[0] == "[CLS]" and enc.tokens[-1] == "[SEP]"
    with pytest.raises(ValueError):
        tokenizer_dir("no-such-encoder")


def test_chunks_of_a_real_judgment(aila_sample: dict[str, Document], tokenizer) -> None:
    doc = aila_sample["C100"]
    segments = segment(doc.text)
    chunks = chunk_document(doc, segments, tokenizer, SIZE, OVERLAP)
    assert len(chunks) > 20
    check_chunks(doc, chunks, tokenizer, SIZE, OVERLAP)
    assert all(c.page_number == 1 for c in chunks)
    # most chunks end at a sentence or paragraph end
    ends = sum(1 for c in chunks[:-1] if c.text.rstrip()[-1] in '.:;?!"')
    assert ends / (len(chunks) - 1) > 0.8
    # with the encoder's two special tokens, no chunk exceeds its 256 word pieces
    assert max(c.n_tokens for c in chunks) + 2 <= 256
    assert chunks[0].to_dict()["chunk_id"] == "C100_0000"


@pytest.mark.parametrize("size,overlap", [(254, 32), (128, 0), (64, 16), (500, 100)])
def test_sizes_and_overlaps_are_parameters(aila_sample: dict[str, Document], tokenizer, size, overlap) -> None:
    for doc_id in ("C1", "C17", "C108"):  # C108 quotes a statute with long runs of dots
        doc = aila_sample[doc_id]
        chunks = chunk_document(doc, None, tokenizer, size, overlap)
        check_chunks(doc, chunks, tokenizer, size, overlap)


def test_bad_sizes(aila_sample: dict[str, Document], tokenizer) -> None:
    doc = aila_sample["C1"]
    with pytest.raises(ValueError):
        chunk_document(doc, None, tokenizer, 32, 32)
    with pytest.raises(ValueError):
        chunk_document(doc, None, tokenizer, 0, 0)


def test_a_paragraph_longer_than_the_size_is_split(aila_sample: dict[str, Document], tokenizer) -> None:
    doc = aila_sample["C17"]
    # the longest paragraph (AILA: one paragraph per line) of a real judgment
    paragraph = max(doc.text.split("\n"), key=len)
    n = len(token_spans(tokenizer, paragraph))
    size = 64
    assert n > 2 * size
    single = Document("C17p", "aila_text", doc.source_path, [Page(0, paragraph)])
    chunks = chunk_document(single, [], tokenizer, size, 8)
    check_chunks(single, chunks, tokenizer, size, 8)
    assert len(chunks) >= n // size
    # cut at sentence ends where the sentences allow it
    at_sentence = sum(1 for c in chunks[:-1] if c.text.rstrip()[-1] in ".?!:;\"")
    assert at_sentence >= len(chunks) // 2
    assert all(c.section_type == "Unknown" for c in chunks)  # no segments given


def test_section_type_is_the_majority(aila_sample: dict[str, Document], tokenizer) -> None:
    doc = aila_sample["C1011"]
    text = doc.text
    chunks = chunk_document(doc, [Segment("Ratio", 0, len(text))], tokenizer, 128, 16)
    assert len(chunks) >= 4
    target = chunks[2]
    # a cut inside chunk 2: 30 % of its characters before it (Facts), 70 % after (Held)
    cut = target.char_start + int(0.3 * (target.char_end - target.char_start))
    segments = [Segment("Facts", 0, cut), Segment("Held", cut, len(text))]
    typed = chunk_document(doc, segments, tokenizer, 128, 16)
    assert [c.char_start for c in typed] == [c.char_start for c in chunks]
    assert typed[2].section_type == "Held"
    assert typed[0].section_type == "Facts" and typed[-1].section_type == "Held"
    # and with the real segmentation: each chunk's type holds most of its characters
    real = segment(text)
    for c in chunk_document(doc, real, tokenizer, 128, 16):
        share = {}
        for s in real:
            overlap = min(c.char_end, s.end) - max(c.char_start, s.start)
            if overlap > 0:
                share[s.section_type] = share.get(s.section_type, 0) + overlap
        assert share[c.section_type] == max(share.values())


def test_page_numbers_of_a_real_pdf(pdf_doc: Document, tokenizer) -> None:
    assert len(pdf_doc.pages) == 19
    chunks = chunk_document(pdf_doc, None, tokenizer, SIZE, OVERLAP)
    check_chunks(pdf_doc, chunks, tokenizer, SIZE, OVERLAP)
    pages = {p.index + 1: p.text for p in pdf_doc.pages}
    numbers = [c.page_number for c in chunks]
    assert numbers == sorted(numbers)
    assert len(set(numbers)) >= 15
    assert numbers[0] == 1 and numbers[-1] >= 18
    bounds = page_offsets(pdf_doc)
    for c in chunks:
        # the page holds most of the chunk's characters ...
        held = {n: max(0, min(c.char_end, e) - max(c.char_start, s)) for s, e, n in bounds}
        assert held[c.page_number] == max(held.values())
    # ... and the chunk's first 50 characters are on that page's text, unless the chunk starts on
    # the page before (its tail end) and has most of its text on the next one
    on_page = 0
    for c in chunks:
        s, e, _ = next(b for b in bounds if b[2] == c.page_number)
        if s <= c.char_start and c.char_start + 50 <= e:
            assert c.text[:50] in pages[c.page_number]
            on_page += 1
    assert on_page >= 0.6 * len(chunks)


def test_page_number_is_the_pdf_page(pdf_doc: Document, tokenizer) -> None:
    # pages 6 to 9 of the PDF only: the numbers stay the PDF's own (Page.index + 1)
    part = Document("judgment_01_p6", "pdf", pdf_doc.source_path, pdf_doc.pages[5:9])
    chunks = chunk_document(part, None, tokenizer, 128, 16)
    assert {c.page_number for c in chunks} == {6, 7, 8, 9}
    for c in chunks:
        page = pdf_doc.pages[c.page_number - 1]
        if c.text[:50] in page.text:
            assert page.index == c.page_number - 1


def test_batched_chunking_matches(aila_sample: dict[str, Document], tokenizer) -> None:
    docs = list(aila_sample.values())
    batched = list(chunk_documents(docs, tokenizer, SIZE, OVERLAP, batch_size=2))
    single = [chunk_document(d, segment(d.text), tokenizer, SIZE, OVERLAP) for d in docs]
    assert batched == single


def test_empty_document(tokenizer) -> None:
    doc = Document("E", "pdf", "e.pdf", [Page(0, ""), Page(1, "   \n")])
    assert chunk_document(doc, None, tokenizer, SIZE, OVERLAP) == []


def test_truncation() -> None:
    result = truncation([254, 300, 100, 256], 256)
    assert result["n_chunks"] == 4 and result["n_tokens"] == 910
    assert result["n_chunks_truncated"] == 2  # 300 and 256 exceed 254 + [CLS] + [SEP]
    assert result["n_tokens_dropped"] == 46 + 2
    assert result["share_tokens_dropped"] == round(48 / 910, 4)
    assert truncation([], 256)["share_tokens_dropped"] == 0.0


def test_truncation_by_size(aila_sample: dict[str, Document], tokenizer) -> None:
    docs = list(aila_sample.values())
    result = truncation_by_size(docs, tokenizer, [254, 510], 256)
    assert result[254]["n_tokens_dropped"] == 0
    assert result[510]["share_chunks_truncated"] > 0.5
    assert 0.2 < result[510]["share_tokens_dropped"] < 0.6


@pytest.mark.slow
def test_all_aila_judgments_chunk_within_the_encoder(tokenizer, aila_files) -> None:
    docs = read_aila(aila_files)
    assert len(docs) == 2914
    n_chunks, longest = 0, 0
    for chunks in chunk_documents(docs, tokenizer, SIZE, OVERLAP):
        n_chunks += len(chunks)
        longest = max([longest, *(c.n_tokens for c in chunks)])
    assert longest <= SIZE
    assert 65_000 < n_chunks < 80_000  # 71,824 at 254/32 when measured
