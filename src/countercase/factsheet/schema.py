"""The fact sheet: a typed model whose every value carries the span of text it came from and the
extractor that produced it. ``factsheet.schema.json`` beside this module is generated from the
model (``python -m countercase.factsheet.schema``; a test checks it is current and a fuzz test
that both accept the same JSON); ``validate_sheet`` names the field and value at fault.

The model is strict so that it takes what its JSON Schema takes and nothing more: no ``"5"`` or
``true`` for a number, no non-finite number, bounds on every number, section ids in canonical
form. One rule a JSON Schema cannot state, a span's ``end`` not before its ``start``, is checked
by the model only (the schema's description says so).

Closed vocabularies: :data:`PARTY_TYPES` (the plan's ontology) and :data:`EVIDENCE_TYPES`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, ValidationError,
                      model_validator)

from countercase.legal.acts import ACTS
from countercase.errors import CountercaseError
from countercase.factsheet.categories import CASE_CATEGORIES
from countercase.factsheet.roles import NUMBER_ROLES
from countercase.legal.vocab import OUTCOMES

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
CaseCategory = Literal[CASE_CATEGORIES]  # type: ignore[valid-type]
AgeRole = Literal[NUMBER_ROLES["ages"]]  # type: ignore[valid-type]
AmountRole = Literal[NUMBER_ROLES["amounts"]]  # type: ignore[valid-type]
DurationRole = Literal[NUMBER_ROLES["durations"]]  # type: ignore[valid-type]


# Bounds of what a judgment can hold, so that no extractor or hand edit writes a value JSON
# cannot carry back (a 309-digit amount became ``inf``, written as ``null``).
MAX_OFFSET = 2**31 - 1  # characters into a case text
MAX_AMOUNT = 1e15  # rupees: over 1,000 times the largest sum in the corpus's fact sheets (6.5e11)
MAX_DURATION = 1e5  # of any unit (the corpus's largest: 2,601)
# A canonical section id (countercase.legal.acts): "IPC-302", "IPC-498A", "Constitution-Article-21".
SECTION_ID_PATTERN = ("^(?:" + "|".join(a.code for a in ACTS if a.unit == "Section")
                      + r")-[0-9]{1,4}[A-Z]{0,2}$|^(?:"
                      + "|".join(a.code for a in ACTS if a.unit == "Article")
                      + r")-Article-[0-9]{1,4}[A-Z]{0,2}$")


def _whole_number(value: Any) -> Any:
    """5.0 as 5: a JSON Schema ``integer`` takes a number with no fractional part."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Offset = Annotated[int, Field(ge=0, le=MAX_OFFSET), BeforeValidator(_whole_number)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class Span(_Model):
    """Character offsets ``[start, end)`` into the text the sheet was extracted from
    (``end`` is never before ``start``)."""

    model_config = ConfigDict(json_schema_extra={
        "description": "Character offsets [start, end) into the case text; end >= start "
                       "(checked by countercase.factsheet.schema.validate_sheet)."})

    start: Offset
    end: Offset
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
    section_id: str = Field(pattern=SECTION_ID_PATTERN)  # canonical (countercase.legal.acts)


class Amount(_Grounded):
    value: float = Field(ge=0, le=MAX_AMOUNT)
    currency: Literal["INR"] = "INR"
    role: AmountRole = "unknown"  # what the sum is (countercase.factsheet.roles)


class Age(_Grounded):
    years: float = Field(ge=0, le=130)
    descriptor: Optional[str] = None  # "minor", "major", ...
    role: AgeRole = "unknown"  # whose age it is


class Duration(_Grounded):
    value: float = Field(ge=0, le=MAX_DURATION)
    unit: Literal["years", "months", "weeks", "days", "hours"]
    role: DurationRole = "unknown"  # what the period measures


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
    categories: list[CaseCategory] = []  # the case's legal domains (factsheet.categories)


class FactSheetError(CountercaseError, ValueError):
    """A fact sheet that does not match the schema; the message names field and value."""


def validate_sheet(data: dict) -> FactSheet:
    try:
        return FactSheet.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}{_got(e)}"
                             for e in error.errors())
        raise FactSheetError(f"invalid fact sheet: {problems}") from None


def _got(error: dict) -> str:
    """What the field held, cut to a line (a missing field's input is the whole sheet)."""
    if error["type"] == "missing":
        return ""
    text = repr(error.get("input"))
    return f" (got {text if len(text) <= 80 else text[:77] + '...'})"


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
