"""A first look without the pipeline: a project folder that ``countercase tree``, ``search``
and ``explore`` work on, built in a few minutes on 2 cores (``make quickstart``).

The AILA judgments are ingested, extracted and BM25-indexed, their fact sheets read by the
rules alone and the section adjacency map built, each by the same function its DVC stage calls,
laid out as the pipeline lays them out. What it leaves out, for speed: dense embeddings (the
searches are BM25 alone), the entity tagger and the LLM (the sheets are the rules'), and every
evaluation. The tests build the same folder on thirty judgments.
"""

from __future__ import annotations

import io
import logging
import shutil
import tarfile
from pathlib import Path
from typing import Iterator

from countercase import layout
from countercase.config import load_params
from countercase.errors import CountercaseError
from countercase.extract.run import read_sections, run_extract
from countercase.factsheet.rules import extract_rules
from countercase.index.run import run_index
from countercase.ingest.run import read_documents, run_ingest
from countercase.ingest.text import TextSource
from countercase.legal.adjacency import build_adjacency

log = logging.getLogger(__name__)


class _Only:
    """A source's documents whose id is in ``wanted`` (its failures all pass)."""

    def __init__(self, source, wanted: set[str]) -> None:
        self.source, self.wanted, self.name = source, wanted, source.name

    def __iter__(self) -> Iterator:
        for item in self.source:
            if getattr(item, "doc_id", None) is None or item.doc_id in self.wanted:
                yield item


def _statutes(repository: Path, out: Path, first: int | None) -> Path:
    """The AILA statutes tar, or one holding its first ``first`` statutes."""
    source = repository / layout.AILA_STATUTES
    if first is None:
        return source
    target = out / "statutes.tar.gz"
    with tarfile.open(source, "r:gz") as archive, tarfile.open(target, "w:gz") as small:
        members = sorted((m for m in archive if m.isfile() and m.name.endswith(".txt")),
                         key=lambda m: int(Path(m.name).stem.lstrip("S") or 0))
        for member in members[:first]:
            small.addfile(member, io.BytesIO(archive.extractfile(member).read()))
    return target


def build_project(out: Path, repository: Path, judgments: list[str] | None = None,
                  statutes: int | None = None, min_count: int = 3) -> Path:
    """``out`` as a project: ``judgments`` (default: all of AILA's) and ``statutes`` (default:
    all) from the ``repository``'s embedded data, with its ``params.yaml``, ``dvc.yaml`` and
    choice files;
    ``min_count``: co-citations that make a section edge (the adjacency stage's default)."""
    import pandas as pd

    if out.exists() and not out.is_dir():
        raise CountercaseError(f"{out} is a file, not a folder for the project")
    if (out / layout.INDEX).exists():
        raise CountercaseError(f"{out} already holds a project: remove it or choose another")
    out.mkdir(parents=True, exist_ok=True)
    for name in ("params.yaml", "dvc.yaml"):
        shutil.copy(repository / name, out / name)
    # not the learned ranker's serving choice (configs/ltr_choice.yaml): the quick project trains
    # no ranker, so it serves the pipeline
    for choice in (layout.TUNING_CHOICE, layout.RERANKER_CHOICE, layout.TREES_CHOICE):
        if (repository / choice).is_file():  # the choices the whole corpus's stages made
            (out / choice).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(repository / choice, out / choice)
    params = load_params(out / "params.yaml")
    (out / layout.AILA).mkdir(parents=True, exist_ok=True)
    shutil.copy(repository / layout.AILA_QUERIES, out / layout.AILA_QUERIES)
    source = TextSource(repository / layout.AILA_CASEDOCS)
    log.info("ingest, extract, index (BM25), rule fact sheets, adjacency -> %s", out)
    run_ingest([_Only(source, set(judgments)) if judgments else source], out / layout.INGEST)
    raw = repository / layout.RAW
    run_extract(out / layout.DOCUMENTS, raw / "statutes", raw / "sc_metadata" / "raw",
                out / layout.EXTRACT, params.extract)
    run_index(out / layout.CHUNKS, out / layout.METADATA, out / layout.DOCUMENTS,
              _statutes(repository, out, statutes), out / layout.STATUTE_TABLE,
              out / layout.INDEX, params.index, params.extract)
    segments = read_sections(out / layout.SECTIONS)
    (out / layout.FACTSHEETS).mkdir(parents=True, exist_ok=True)
    with (out / layout.JUDGMENT_SHEETS).open("w", encoding="utf-8") as handle:
        for doc in read_documents(out / layout.DOCUMENTS):
            sheet = extract_rules(doc.text, doc.doc_id, "judgment", segments.get(doc.doc_id))
            handle.write(sheet.model_dump_json() + "\n")
    cited = pd.read_parquet(out / layout.METADATA, columns=["act_sections"])["act_sections"]
    edges = build_adjacency(pd.read_parquet(out / layout.EXTRACT / "statutes.parquet"),
                            pd.read_parquet(out / layout.EXTRACT / "constitution_crossrefs.parquet"),
                            (s for s in cited if s is not None), min_count)
    (out / layout.ADJACENCY).mkdir(parents=True, exist_ok=True)
    edges.to_parquet(out / layout.SECTION_EDGES, index=False)
    return out
