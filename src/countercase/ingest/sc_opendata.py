"""A local copy of the Indian Supreme Court Judgments open dataset (AWS open-data bucket
``indian-supreme-court-judgments``), read in place: yearly tar files are never unpacked to disk.

Layout read (as in the bucket)::

    data/tar/year=YYYY/english/english.tar          PDFs
    metadata/parquet/year=YYYY/metadata.parquet     one record per judgment, or
    metadata/tar/year=YYYY/metadata.tar             JSON records, or
    metadata/json/year=YYYY/*.json                  JSON records

A PDF is joined to its record by file name: the record's ``temp_link`` ("jonew/judis/37014.pdf
(English)") ends with the name of the PDF member. The record goes into the document's provenance.
"""

from __future__ import annotations

import io
import json
import logging
import re
import tarfile
from pathlib import Path
from typing import Any, Iterator

from countercase.config import IngestParams
from countercase.ingest.document import Document, IngestFailure
from countercase.ingest.pdf import read_pdf

log = logging.getLogger(__name__)

_YEAR_DIR = re.compile(r"year=(\d{4})$")


def pdf_name(temp_link: str | None) -> str | None:
    """``"jonew/judis/37014.pdf (English)"`` -> ``"37014.pdf"``."""
    if not temp_link:
        return None
    path = re.sub(r"\s*\([^)]*\)\s*$", "", str(temp_link)).strip()
    return Path(path).name or None


def _json_records(payload: Any) -> list[dict]:
    if isinstance(payload, dict) and isinstance(payload.get("data"), list):
        return payload["data"]
    return payload if isinstance(payload, list) else [payload]


def load_year_metadata(root: Path, year: str) -> dict[str, dict]:
    """Records of one year keyed by PDF file name, from whichever metadata form is present."""
    records: list[dict] = []
    parquet = root / "metadata" / "parquet" / f"year={year}" / "metadata.parquet"
    tar_path = root / "metadata" / "tar" / f"year={year}" / "metadata.tar"
    json_dir = root / "metadata" / "json" / f"year={year}"
    if parquet.exists():
        import pandas as pd

        records = json.loads(pd.read_parquet(parquet).to_json(orient="records"))
    elif tar_path.exists():
        with tarfile.open(tar_path) as archive:
            for member in archive:
                if member.isfile() and member.name.endswith(".json"):
                    records += _json_records(json.load(archive.extractfile(member)))
    elif json_dir.is_dir():
        for path in sorted(json_dir.glob("*.json")):
            records += _json_records(json.loads(path.read_text(encoding="utf-8")))
    return {name: record for record in records if (name := pdf_name(record.get("temp_link")))}


def doc_id_for(year: str, name: str) -> str:
    return f"sc{year}_" + re.sub(r"[^A-Za-z0-9]+", "_", Path(name).stem).strip("_")


class ScOpenDataSource:
    def __init__(self, root: str | Path, params: IngestParams = IngestParams(),
                 language: str = "english") -> None:
        self.root = Path(root)
        self.params = params
        self.language = language

    def _tars(self) -> list[tuple[str, Path]]:
        found = []
        for year_dir in sorted((self.root / "data" / "tar").glob("year=*")):
            match = _YEAR_DIR.search(year_dir.name)
            tar_path = year_dir / self.language / f"{self.language}.tar"
            if match and tar_path.exists():
                found.append((match.group(1), tar_path))
        return found

    def __iter__(self) -> Iterator[Document | IngestFailure]:
        tars = self._tars()
        if not tars:
            yield IngestFailure(str(self.root), "no data/tar/year=YYYY/"
                                f"{self.language}/{self.language}.tar under this folder")
            return
        for year, tar_path in tars:
            try:
                metadata = load_year_metadata(self.root, year)
            except Exception as error:  # damaged metadata: keep the PDFs, report the loss
                log.warning("metadata of %s unreadable: %s", year, error)
                metadata = {}
            try:
                archive = tarfile.open(tar_path)
                members = sorted((m for m in archive.getmembers()
                                  if m.isfile() and m.name.lower().endswith(".pdf")),
                                 key=lambda m: m.name)
            except (OSError, tarfile.TarError, EOFError) as error:
                yield IngestFailure(str(tar_path), f"damaged tar archive: {error}")
                continue
            with archive:
                for member in members:
                    where = f"{tar_path}!{member.name}"
                    try:
                        data = archive.extractfile(member).read()
                    except (OSError, tarfile.TarError, EOFError) as error:
                        yield IngestFailure(where, f"cannot read tar member: {error}")
                        continue
                    name = Path(member.name).name
                    item = read_pdf(data, where, doc_id_for(year, name), self.params,
                                    source="sc_tar")
                    if isinstance(item, Document):
                        record = metadata.get(name)
                        item.provenance.update({"year_folder": year, "sc_metadata": record,
                                                "metadata_found": record is not None})
                    yield item
