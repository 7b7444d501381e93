"""Inference with the trained tagger: word-level tags of sentences, and entity spans with
character offsets into any text.

Text is split on whitespace, as InLegalNER's tokens were. A sentence or text longer than the
encoder's window is read in overlapping windows of words; each word takes its tag from the window
in which it sits farthest from an edge, so an entity cut by one window is whole in the next.
A word's tag is the arg-max at its first word piece (the label the model was trained on); an
entity's score is the mean softmax probability of its words' tags.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from countercase.errors import CountercaseError
from countercase.ner.data import word_windows
from countercase.ner.metrics import entities, repair
from countercase.runtime.models import offline

log = logging.getLogger(__name__)

_WORD = re.compile(r"\S+")
# Punctuation InLegalNER leaves on a token ("302,"), dropped from a span's ends.
_TRAILING = ",;:)]\"'"
_LEADING = "([\"'"


class NerModelError(CountercaseError, LookupError):
    """No usable trained tagger at the given folder."""


@dataclass(frozen=True)
class EntitySpan:
    label: str
    start: int  # character offsets [start, end) into the tagged text
    end: int
    text: str
    score: float

    def to_dict(self) -> dict:
        return asdict(self)


def predict_words(model, tokenizer, sentences: list[list[str]], max_length: int,
                  batch_size: int = 32, overlap: int = 16) -> list[tuple[list[str], list[float]]]:
    """``(tags, probabilities)`` per word of every sentence (tags BIO-repaired)."""
    import torch

    labels = [model.config.id2label[i] for i in range(model.config.num_labels)]
    best: list[list[tuple[int, int, float]]] = [[(-1, 0, 1.0)] * len(s) for s in sentences]
    items = []
    if sentences:
        # counted whole, then cut into windows: no warning about the encoder's limit
        pieces = tokenizer(sentences, is_split_into_words=True, add_special_tokens=False,
                           verbose=False)
        for i, words in enumerate(sentences):
            counts = [0] * len(words)
            for w in pieces.word_ids(i):
                if w is not None:
                    counts[w] += 1
            for start, end in word_windows(counts, max_length - 2, overlap):
                items.append((sum(counts[start:end]), i, start, end))
    items.sort()  # similar lengths together: less padding
    model.eval()
    with torch.inference_mode():
        for b in range(0, len(items), batch_size):
            batch = items[b:b + batch_size]
            encoded = tokenizer([sentences[i][s:e] for _, i, s, e in batch],
                                is_split_into_words=True, truncation=True,
                                max_length=max_length, padding=True, return_tensors="pt")
            inputs = {k: v.to(model.device) for k, v in encoded.items()}
            probs = torch.softmax(model(**inputs).logits.float(), dim=-1).cpu()
            top, arg = probs.max(dim=-1)
            for row, (_, i, start, end) in enumerate(batch):
                seen = set()
                for position, w in enumerate(encoded.word_ids(row)):
                    if w is None or w in seen:
                        continue
                    seen.add(w)
                    word = start + w
                    centrality = min(word - start, end - 1 - word)
                    if centrality > best[i][word][0]:
                        best[i][word] = (centrality, int(arg[row, position]),
                                         float(top[row, position]))
    results = []
    for row in best:
        # a word with no word piece (a stray control character) is outside any entity
        tags = [labels[label] if centrality >= 0 else "O" for centrality, label, _ in row]
        results.append((repair(tags), [p for _, _, p in row]))
    return results


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while end > start and text[end - 1] in _TRAILING:
        if text[end - 1] == ")" and text.count("(", start, end) >= text.count(")", start, end):
            break  # "13(1)": the bracket is the span's own
        end -= 1
    while start < end and text[start] in _LEADING:
        start += 1
    # a final full stop ends the sentence unless the last word is an abbreviation ("I.P.C.")
    if end > start and text[end - 1] == "." and "." not in (text[start:end - 1].split() or [""])[-1]:
        end -= 1
    return start, end


class LegalNerTagger:
    """The tagger trained by ``countercase train-ner``: ``LegalNerTagger.load(dir).tag(text)``."""

    def __init__(self, model, tokenizer, max_length: int, batch_size: int = 32):
        self.model, self.tokenizer = model, tokenizer
        self.max_length, self.batch_size = max_length, batch_size

    @classmethod
    def load(cls, model_dir: Path, threads: int | None = None) -> "LegalNerTagger":
        model_dir = Path(model_dir)
        if not (model_dir / "config.json").exists():
            raise NerModelError(f"no trained NER model in {model_dir} (config.json missing): "
                                "run `dvc repro train_ner` (or `countercase train-ner`) first")
        offline()
        import torch
        from transformers import AutoModelForTokenClassification, AutoTokenizer

        if threads:
            torch.set_num_threads(threads)
        settings = model_dir / "tagger.json"
        max_length = json.loads(settings.read_text())["max_length"] if settings.exists() else 128
        model = AutoModelForTokenClassification.from_pretrained(model_dir)
        return cls(model, AutoTokenizer.from_pretrained(model_dir), max_length)

    def tag_words(self, sentences: list[list[str]]) -> list[tuple[list[str], list[float]]]:
        return predict_words(self.model, self.tokenizer, sentences, self.max_length,
                             self.batch_size)

    def tag(self, text: str) -> list[EntitySpan]:
        """Entity spans of ``text``, in order; ``text[span.start:span.end] == span.text``."""
        return self.tag_many([text])[0]

    def tag_many(self, texts: list[str]) -> list[list[EntitySpan]]:
        words = [words_of(text) for text in texts]
        predicted = self.tag_words([[text[s:e] for s, e in w] for text, w in zip(texts, words)])
        return [spans_from_tags(text, w, tags, probs)
                for text, w, (tags, probs) in zip(texts, words, predicted)]


def words_of(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each whitespace-separated word, as InLegalNER's tokens."""
    return [(m.start(), m.end()) for m in _WORD.finditer(text or "")]


def spans_from_tags(text: str, words: list[tuple[int, int]], tags: list[str],
                    probs: list[float]) -> list[EntitySpan]:
    """Entity spans of word-level BIO tags, trimmed of the punctuation tokens carry."""
    spans = []
    for kind, first, last in sorted(entities(tags), key=lambda e: e[1]):
        start, end = _trim(text, words[first][0], words[last - 1][1])
        if end <= start:
            continue
        score = sum(probs[first:last]) / (last - first)
        spans.append(EntitySpan(kind, start, end, text[start:end], round(score, 4)))
    return spans
