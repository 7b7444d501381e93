"""The fact sheet: a typed model whose every value carries the span of text it came from and the
extractor that produced it. ``factsheet.schema.json`` beside this module is the model's JSON
Schema (a test checks they agree); ``validate_sheet`` names the field and value at fault.

Closed vocabularies: :data:`PARTY_TYPES` (the plan's ontology) and :data:`EVIDENCE_TYPES`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from countercase.errors import CountercaseError
from countercase.vocab import OUTCOMES

PARTY_TYPES = ("Individual", "Minor", "Corporation", "Partnership", "State", "UnionOfIndia",
               "ForeignNational", "PublicSector", "PrivateSector", "Employee", "Contractor",
               "Tenant", "Licensee", "Landlord", "Unknown")
EVIDENCE_TYPES = ("DyingDeclaration", "Confession", "MedicalReport", "PostMortemReport",
                  "EyeWitness", "Recovery", "Document", "Expert", "FIR", "LastSeen",
                  "Circumstantial", "ExtraJudicialConfession")
EXTRACTORS = ("rules", "llm", "manual", "perturbation")
SCHEMA_PATH = Path(__file__).with_name("factsheet.schema.json")

PartyType = Literal[PARTY_TYPES]  # type: ignore[valid-type]
EvidenceType = Literal[EVIDENCE_TYPES]  # type: ignore[valid-type]
Extractor = Literal[EXTRACTORS]  # type: ignore[valid-type]
Outcome = Literal[OUTCOMES]  # type: ignore[valid-type]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Span(_Model):
    """Character offsets ``[start, end)`` into the text the sheet was extracted from."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str

    @model_validator(mode="after")
    def _ordered(self) -> "Span":
        if self.end < self.start:
            raise ValueError(f"span end {self.end} is before its start {self.start}")
        return self


class _Grounded(_Model):
    span: Optional[Span] = None  # None only for a value set by hand
    extractor: Extractor = "rules"


class Party(_Grounded):
    type: PartyType = "Unknown"


class Parties(_Model):
    petitioner: Party = Party()
    respondent: Party = Party()


class EvidenceItem(_Grounded):
    evidence_type: EvidenceType
    description: str


class SectionCited(_Grounded):
    section_id: str  # canonical, e.g. "IPC-302" (countercase.acts)


class Amount(_Grounded):
    value: float = Field(ge=0)
    currency: Literal["INR"] = "INR"


class Age(_Grounded):
    years: float = Field(ge=0, le=130)
    descriptor: Optional[str] = None  # "minor", "major", ...


class Duration(_Grounded):
    value: float = Field(ge=0)
    unit: Literal["years", "months", "weeks", "days", "hours"]


class NumericalFacts(_Model):
    amounts: list[Amount] = []
    ages: list[Age] = []
    durations: list[Duration] = []


class FactSheet(_Model):
    case_id: str
    source: Literal["judgment", "query", "text"]
    facts_span: Span  # the facts section the sheet was read from
    facts_located_by: Literal["segmenter", "whole text"]  # see countercase.extract.segment
    parties: Parties = Parties()
    evidence_items: list[EvidenceItem] = []
    sections_cited: list[SectionCited] = []
    numerical_facts: NumericalFacts = NumericalFacts()
    outcome: Outcome = "Unknown"


class FactSheetError(CountercaseError, ValueError):
    """A fact sheet that does not match the schema; the message names field and value."""


def validate_sheet(data: dict) -> FactSheet:
    try:
        return FactSheet.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']} (got {e.get('input')!r})"
            for e in error.errors())
        raise FactSheetError(f"invalid fact sheet: {problems}") from None


def json_schema() -> dict:
    return FactSheet.model_json_schema()


def shipped_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def write_schema() -> None:
    """Rewrite the shipped schema from the model (``python -m countercase.factsheet.schema``)."""
    SCHEMA_PATH.write_text(json.dumps(json_schema(), indent=1, sort_keys=True) + "\n",
                           encoding="utf-8")


if __name__ == "__main__":
    write_schema()
