"""The typed configuration, read from ``params.yaml``: one section per pipeline stage."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class IngestParams(_Section):
    # Share of the page height, at top and at bottom, where repeated lines count as header/footer.
    header_footer_band: float = Field(0.05, gt=0, lt=0.5)
    # A line must repeat on at least this many consecutive pages to be removed as boilerplate.
    header_footer_min_pages: int = Field(2, ge=2)


class ExtractParams(_Section):
    encoder: str = "all-MiniLM-L6-v2"  # its tokenizer counts chunk tokens
    encoder_max_tokens: int = Field(256, gt=8)  # incl. the two special tokens
    chunk_size: int = Field(254, gt=8)  # word pieces, excl. special tokens
    chunk_overlap: int = Field(32, ge=0)
    facts_fallback_fraction: float = Field(0.2, gt=0, le=1)


class Params(_Section):
    seed: int = 2019
    ingest: IngestParams = IngestParams()
    extract: ExtractParams = ExtractParams()


class ConfigError(ValueError):
    """A params file that is missing, unreadable or invalid; the message names the file."""


def load_params(path: str | Path = "params.yaml") -> Params:
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as error:
        raise ConfigError(f"cannot read parameters file {path}: {error.strerror}") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path} is not valid YAML: {error}") from None
    try:
        return Params.model_validate(raw)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()
        )
        raise ConfigError(f"invalid parameters in {path}: {problems}") from None
