"""Shared fixtures: every test reads the real data embedded in the project, never ../shared."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"


@pytest.fixture(scope="session")
def raw_dir() -> Path:
    return RAW


@pytest.fixture(scope="session")
def pdf_dir() -> Path:
    return RAW / "pdfs"
