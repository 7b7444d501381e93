"""A local copy of the Indian Supreme Court Judgments open dataset (AWS open-data bucket
``indian-supreme-court-judgments``), read in place: no tar is unpacked to disk.

Layout read (as in the bucket)::

    data/tar/year=YYYY/english/english.tar          PDFs (large years add part-*.tar files)
    metadata/parquet/year=YYYY/metadata.parquet     one record per judgment, or else
    metadata/tar/year=YYYY/metadata.tar             JSON records, or else
    metadata/json/year=YYYY/*.json                  JSON records

Each PDF member is read into memory and goes through :func:`countercase.ingest.pdf.read_pdf`.
It is joined to its metadata record by file name, the key the dataset itself uses:

- records of the current scraper carry ``path`` ("2025_5_275_330"); the PDF is
  ``{path}_EN.pdf`` (``{path}_{language}.pdf`` in the regional archive);
- records of the earlier scraper (``data/raw/sc_metadata/raw``) carry ``temp_link``
  ("supremecourt/2017/81/81_2017_Judgement_19-Apr-2018.pdf (English)"); the PDF is the file
  that link names, matched by its relative path or else its file name.

A file name shared by several records (the earlier scraper gave some links to dozens of
judgments) joins none of them: the document keeps ``sc_metadata: null`` and says why. The
record goes into the document's provenance; doc_id comes from the record ("sc_" + path, or
"sc_" + diary number + judgment date), else from the member's file name.
"""

from __future__ import annotations

import json
import logging
import re
import tarfile
from collections import defaultdict
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Iterator

from countercase.config import IngestParams
from countercase.ingest.document import Document, IngestFailure
from countercase.ingest.pdf import PdfJob, read_pdfs

log = logging.getLogger(__name__)

SOURCE = "sc_tar"
_YEAR_DIR = re.compile(r"^year=(\d{4})$")
_LANGUAGE_SUFFIX = re.compile(r"_[A-Za-z]{2,12}$")  # "_EN", "_HINDI"
_UNSAFE = re.compile(r"[^A-Za-z0-9-]+")


def _safe(text: str) -> str:
    return _UNSAFE.sub("_", str(text)).strip("_")


def link_path(temp_link: str | None) -> str | None:
    """``"jonew/judis/37014.pdf (English)"`` -> ``"jonew/judis/37014.pdf"``."""
    if not temp_link:
        return None
    path = re.sub(r"\s*\([^)]*\)\s*$", "", str(temp_link)).strip().lstrip("/")
    return path or None


def pdf_name(temp_link: str | None) -> str | None:
    """``"jonew/judis/37014.pdf (English)"`` -> ``"37014.pdf"``."""
    path = link_path(temp_link)
    return PurePosixPath(path).name if path else None


def record_keys(record: dict) -> list[str]:
    """The names under which a record's PDF may appear in an archive."""
    keys = []
    if record.get("path"):
        keys.append(str(record["path"]))
    if path := link_path(record.get("temp_link")):
        keys += [re.sub(r"/+", "/", path), PurePosixPath(path).name]
    return keys


def member_keys(member_name: str) -> list[str]:
    """The names to look a tar member up by, the most specific first."""
    path = PurePosixPath(member_name)
    return [str(path), path.name, path.stem, _LANGUAGE_SUFFIX.sub("", path.stem)]


class MetadataIndex:
    """Records of the open dataset, found by the name of a PDF member."""

    def __init__(self, records: Iterable[dict]) -> None:
        self.by_key: dict[str, list[dict]] = defaultdict(list)
        for record in records:
            for key in dict.fromkeys(record_keys(record)):
                self.by_key[key].append(record)

    def __len__(self) -> int:
        return len({id(r) for records in self.by_key.values() for r in records})

    def lookup(self, member_name: str) -> tuple[dict | None, str]:
        """(record or None, how it was found or why not)."""
        for key in member_keys(member_name):
            records = self.by_key.get(key, [])
            if len(records) == 1:
                return records[0], f"matched {key!r}"
            if records:
                return None, f"ambiguous: {len(records)} records share {key!r}"
        return None, "no record for this file"


def doc_id_for(record: dict | None, member_name: str, year: str) -> str:
    """Stable, filesystem-safe id: from the record when there is one, else the file name."""
    stem = PurePosixPath(member_name).stem
    if record and record.get("path"):
        path = str(record["path"])
        language = stem[len(path):].strip("_") if stem.startswith(path) else stem
        # The English PDF is the judgment itself; a translation gets its language appended.
        return f"sc_{_safe(path)}" + (f"_{_safe(language)}" if language not in ("", "EN") else "")
    if record and record.get("diary_no") and record.get("judgment_dates"):
        return f"sc_{_safe(record['diary_no'])}_{_safe(record['judgment_dates'])}"
    return f"sc_{year}_{_safe(stem)}"


def _json_records(payload: Any) -> list[dict]:
    """One record, a list of them, or the earlier scraper's ``{"data": [...]}``."""
    if isinstance(payload, dict) and isinstance(payload.get("data"), list):
        payload = payload["data"]
    records = payload if isinstance(payload, list) else [payload]
    return [r for r in records if isinstance(r, dict)]


def load_year_metadata(root: Path, year: str) -> list[dict]:
    """Records of one year, from the first metadata form present (parquet, tar, json)."""
    parquet = root / "metadata" / "parquet" / f"year={year}" / "metadata.parquet"
    tar_path = root / "metadata" / "tar" / f"year={year}" / "metadata.tar"
    json_dir = root / "metadata" / "json" / f"year={year}"
    if parquet.exists():
        import pandas as pd

        # Through JSON so that missing values become None, not NaN or pd.NA.
        return json.loads(pd.read_parquet(parquet).to_json(orient="records"))
    records: list[dict] = []
    if tar_path.exists():
        with tarfile.open(tar_path, "r|*") as archive:
            for member in archive:
                if member.isfile() and member.name.endswith(".json"):
                    records += _json_records(json.load(archive.extractfile(member)))
    elif json_dir.is_dir():
        for path in sorted(json_dir.glob("*.json")):
            records += _json_records(json.loads(path.read_text(encoding="utf-8")))
    return records


class ScOpenDataSource:
    """PDFs of every ``data/tar/year=YYYY/<language>/*.tar``, joined to their records."""

    name = SOURCE

    def __init__(self, root: str | Path, params: IngestParams = IngestParams(),
                 language: str = "english", workers: int = 1,
                 max_pages: int | None = None) -> None:
        self.root = Path(root)
        self.params = params
        self.language = language
        self.workers = workers
        self.max_pages = max_pages

    def years(self) -> list[tuple[str, list[Path]]]:
        found = []
        for year_dir in sorted((self.root / "data" / "tar").glob("year=*")):
            match = _YEAR_DIR.match(year_dir.name)
            # english.tar sorts before the part-<timestamp>.tar files added to it later
            tars = sorted((year_dir / self.language).glob("*.tar"))
            if match and tars:
                found.append((match.group(1), tars))
        return found

    def __iter__(self) -> Iterator[Document | IngestFailure]:
        years = self.years()
        if not years:
            yield IngestFailure(str(self.root), "no data/tar/year=YYYY/"
                                f"{self.language}/*.tar under this folder")
            return
        failures: list[IngestFailure] = []  # of archives and metadata, not of single PDFs
        jobs = self._jobs(years, failures)
        for job, item in read_pdfs(jobs, self.params, SOURCE, self.workers, self.max_pages):
            if isinstance(item, Document):
                item.provenance.update(job.context)
            yield from failures
            failures.clear()
            yield item
        yield from failures

    def _jobs(self, years: list[tuple[str, list[Path]]],
              failures: list[IngestFailure]) -> Iterator[PdfJob]:
        for year, tars in years:
            try:
                index = MetadataIndex(load_year_metadata(self.root, year))
            except Exception as error:  # damaged metadata: keep the PDFs, report the loss
                failures.append(IngestFailure(
                    str(self.root / "metadata"), f"metadata of {year} unreadable: {error}"[:300]))
                index = MetadataIndex([])
            log.info("year %s: %d metadata records, %d archive(s)", year, len(index), len(tars))
            for tar_path in tars:
                yield from self._members(tar_path, year, index, failures)

    def _members(self, tar_path: Path, year: str, index: MetadataIndex,
                 failures: list[IngestFailure]) -> Iterator[PdfJob]:
        try:
            with tarfile.open(tar_path, "r|*") as archive:  # streamed, one member at a time
                for member in archive:
                    if not (member.isfile() and member.name.lower().endswith(".pdf")):
                        continue
                    data = archive.extractfile(member).read()
                    record, match = index.lookup(member.name)
                    yield PdfJob(data, f"{tar_path}!{member.name}",
                                 doc_id_for(record, member.name, year), {
                                     "sc_year": year, "sc_archive": tar_path.name,
                                     "sc_member": member.name, "sc_metadata": record,
                                     "metadata_found": record is not None,
                                     "metadata_match": match})
        except (OSError, tarfile.TarError, EOFError) as error:
            failures.append(IngestFailure(str(tar_path), f"unreadable or damaged tar: {error}"))
