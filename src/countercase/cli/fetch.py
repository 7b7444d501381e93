"""``countercase fetch-sc``: the Supreme Court open dataset's years, synced to a local folder
(countercase.fetch.s3) that ``countercase ingest --sc-root`` reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from countercase.cli.base import UserError, app
from countercase.fetch.s3 import anonymous_client, fetch_years, parse_years


@app.command("fetch-sc")
def fetch_sc(
    years: str = typer.Option(..., help="Years to fetch: 2015-2020, 2019 or 2001,2003-2004."),
    dest: Path = typer.Option(..., help="The local copy (the bucket's layout is kept)."),
    bucket: str = typer.Option("indian-supreme-court-judgments", help="The S3 bucket."),
    endpoint_url: Optional[str] = typer.Option(
        None, help="Another S3-compatible endpoint (a mirror, or a local test server)."),
    retries: int = typer.Option(5, help="Tries per file, with exponential backoff."),
) -> None:
    """Fetch the open dataset's PDFs (yearly tar files) and metadata for the years asked:
    resumable, retried, every file checked against its listed size (and MD5) before it gets its
    name; a second run fetches nothing that is already whole."""
    wanted = parse_years(years)
    if retries < 1:
        raise UserError(f"--retries {retries}: give 1 or more")
    if dest.exists() and not dest.is_dir():
        raise UserError(f"--dest {dest} is a file, not a folder")
    report = fetch_years(wanted, dest, anonymous_client(endpoint_url, retries), bucket, retries)
    (dest / ".fetch" / "report.json").write_text(json.dumps(report.to_dict(), indent=1) + "\n")
    print(f"{len(report.fetched)} fetched, {len(report.resumed)} resumed, {len(report.skipped)} "
          f"already whole, {report.bytes_fetched:,} bytes; missing years: "
          f"{report.missing_years or 'none'}; failures: {len(report.failures)}")
    if report.failures:
        raise UserError(f"{len(report.failures)} file(s) not fetched whole (listed in "
                        f"{dest / '.fetch' / 'report.json'}): run the same command again to resume")
