"""``countercase fetch-sc``: the open dataset's years, synced to a local folder.

What a year is in the bucket: every object under ``data/tar/year=YYYY/`` (the PDFs, in tar files)
and under ``metadata/<format>/year=YYYY/`` (the records, as parquet, tar or JSON). Each object is
kept at the same relative path under the destination.

Faults and what they do:

- a dropped connection or a short body: the bytes received stay in ``.part`` and the next try
  continues from there with a ranged GET (``If-Match`` on the listed ETag, so a changed object
  is fetched anew), up to ``retries`` tries with exponential backoff;
- a ``.part`` longer than the object, or a finished file of the wrong size: fetched anew;
- a finished file whose size, ETag and MD5 check out: skipped;
- a year with no object: reported as missing, the other years go on.

Every file's outcome is logged and written to ``<dest>/.fetch/log.jsonl``; a file that could not
be fetched is in the returned report's ``failures`` and never appears under its final name.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterable

from countercase.errors import CountercaseError

log = logging.getLogger(__name__)

BUCKET = "indian-supreme-court-judgments"
REGION = "ap-south-1"
PREFIXES = ("data/tar/year={year}/", "metadata/parquet/year={year}/",
            "metadata/tar/year={year}/", "metadata/json/year={year}/")
CHUNK = 1 << 20
STATE = ".fetch"


class FetchError(CountercaseError):
    """The fetch cannot start (bad years, an unreachable bucket); per-file faults are reported,
    not raised."""


@dataclass(frozen=True)
class RemoteObject:
    key: str
    size: int
    etag: str

    @property
    def md5(self) -> str | None:
        """The object's MD5 where its ETag is one (a single-part upload); None otherwise."""
        tag = self.etag.strip('"')
        return tag if len(tag) == 32 and "-" not in tag else None


@dataclass
class FetchReport:
    bucket: str
    years: list[int]
    fetched: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    missing_years: list[int] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)
    bytes_fetched: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_years(text: str) -> list[int]:
    """``"2015-2020"``, ``"2019"`` or ``"2001,2003-2004"`` -> sorted years."""
    years: set[int] = set()
    for part in (p.strip() for p in str(text).split(",")):
        if not part:
            continue
        try:
            first, _, last = part.partition("-")
            a, b = int(first), int(last or first)
        except ValueError:
            raise FetchError(f"--years {text!r}: give years as 2015-2020, 2019 or 2001,2003-2004") \
                from None
        if not 1900 <= a <= b <= 2100:
            raise FetchError(f"--years {text!r}: {part} is not a range of years from 1900 to 2100")
        years.update(range(a, b + 1))
    if not years:
        raise FetchError(f"--years {text!r}: no year given")
    return sorted(years)


def anonymous_client(endpoint_url: str | None = None, retries: int = 5):
    """An S3 client without credentials (the bucket is public), retrying its own calls."""
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config

    return boto3.client("s3", region_name=REGION, endpoint_url=endpoint_url,
                        config=Config(signature_version=UNSIGNED, connect_timeout=20,
                                      read_timeout=60,
                                      retries={"max_attempts": retries, "mode": "standard"}))


def list_year(client, bucket: str, year: int) -> list[RemoteObject]:
    found = []
    paginator = client.get_paginator("list_objects_v2")
    for prefix in PREFIXES:
        for page in paginator.paginate(Bucket=bucket, Prefix=prefix.format(year=year)):
            found += [RemoteObject(o["Key"], int(o["Size"]), o.get("ETag", ""))
                      for o in page.get("Contents", []) if not o["Key"].endswith("/")]
    return sorted(found, key=lambda o: o.key)


def _local(dest: Path, key: str) -> Path:
    path = PurePosixPath(key)
    if path.is_absolute() or ".." in path.parts:
        raise FetchError(f"object key {key!r} would leave the destination")
    return dest.joinpath(*path.parts)


def _md5(path: Path) -> str:
    digest = hashlib.md5()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _whole(path: Path, obj: RemoteObject) -> bool:
    return (path.is_file() and path.stat().st_size == obj.size
            and (obj.md5 is None or _md5(path) == obj.md5))


def _download(client, bucket: str, obj: RemoteObject, part: Path) -> tuple[int, bool]:
    """Append the object's missing bytes to ``part``; returns (bytes written, resumed)."""
    have = part.stat().st_size if part.exists() else 0
    if have > obj.size:
        part.unlink()
        have = 0
    if have == obj.size:
        return 0, have > 0
    request: dict[str, Any] = {"Bucket": bucket, "Key": obj.key}
    if have:
        request["Range"] = f"bytes={have}-"
        if obj.etag:
            request["IfMatch"] = obj.etag
    response = client.get_object(**request)
    written = 0
    with part.open("ab") as handle:
        for block in response["Body"].iter_chunks(CHUNK):
            handle.write(block)
            written += len(block)
    return written, have > 0


def fetch_object(client, bucket: str, obj: RemoteObject, dest: Path, retries: int = 5,
                 backoff: float = 1.0, sleep: Callable[[float], None] = time.sleep) -> str:
    """One object into place: "skipped" (already whole), "fetched" or "resumed"; raises
    :class:`FetchError` when it could not be made whole in ``retries`` tries."""
    from botocore.exceptions import BotoCoreError, ClientError

    final = _local(dest, obj.key)
    if _whole(final, obj):
        return "skipped"
    final.parent.mkdir(parents=True, exist_ok=True)
    part = final.with_name(final.name + ".part")
    resumed = False
    last = ""
    for attempt in range(1, retries + 1):
        try:
            _, again = _download(client, bucket, obj, part)
            resumed = resumed or again
        except ClientError as error:
            code = str(error.response.get("Error", {}).get("Code", ""))
            if code in ("PreconditionFailed", "412", "InvalidRange", "416"):
                part.unlink(missing_ok=True)  # the object changed, or the part is unusable
            elif code.startswith("4") or code in ("AccessDenied", "NoSuchKey", "NoSuchBucket"):
                raise FetchError(f"{obj.key}: {code}: {error}") from None  # retrying cannot help
            last = f"{code or 'ClientError'}: {error}"
        except (BotoCoreError, OSError, ConnectionError) as error:  # dropped, short, reset
            last = f"{type(error).__name__}: {error}"
        if part.exists() and part.stat().st_size == obj.size:
            if obj.md5 is None or _md5(part) == obj.md5:
                part.replace(final)  # only a whole, checked file gets its name
                return "resumed" if resumed else "fetched"
            part.unlink()
            last = "MD5 mismatch: the bytes received are not the object"
        if attempt < retries:
            log.warning("%s: try %d of %d failed (%s); again in %.1f s", obj.key, attempt,
                        retries, last or "short body", backoff * 2 ** (attempt - 1))
            sleep(backoff * 2 ** (attempt - 1))
    raise FetchError(f"{obj.key}: not fetched whole after {retries} tries ({last or 'short body'})")


def fetch_years(years: Iterable[int], dest: Path, client=None, bucket: str = BUCKET,
                retries: int = 5, backoff: float = 1.0,
                sleep: Callable[[float], None] = time.sleep) -> FetchReport:
    """Sync the years' objects into ``dest``; every file's outcome is logged and appended to
    ``dest/.fetch/log.jsonl``."""
    from botocore.exceptions import BotoCoreError, ClientError
    from tqdm import tqdm

    client = client or anonymous_client()
    years = sorted(set(years))
    report = FetchReport(bucket, years)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / STATE).mkdir(exist_ok=True)
    journal = (dest / STATE / "log.jsonl").open("a", encoding="utf-8")
    try:
        for year in years:
            try:
                objects = list_year(client, bucket, year)
            except (BotoCoreError, ClientError) as error:
                raise FetchError(f"cannot list {bucket} for {year}: {error}") from None
            if not objects:
                log.warning("year %d: no object in %s (missing upstream)", year, bucket)
                report.missing_years.append(year)
                continue
            for obj in tqdm(objects, desc=f"fetch {year}", unit="file"):
                try:
                    outcome = fetch_object(client, bucket, obj, dest, retries, backoff, sleep)
                except FetchError as error:
                    log.error("%s", error)
                    report.failures.append({"key": obj.key, "reason": str(error)})
                    outcome = "failed"
                else:
                    getattr(report, outcome).append(obj.key)
                    if outcome != "skipped":
                        report.bytes_fetched += obj.size
                log.info("%s %s (%d bytes)", outcome, obj.key, obj.size)
                journal.write(json.dumps({"key": obj.key, "size": obj.size, "etag": obj.etag,
                                          "outcome": outcome}) + "\n")
    finally:
        journal.close()
    return report
