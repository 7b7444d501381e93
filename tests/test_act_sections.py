"""Section references in real judgment sentences map to canonical ids; unknown acts never do."""

from __future__ import annotations

import pytest

from countercase.extract.act_sections import (
    UnknownSectionError, find_sections, normalise_sections, parse_section_id,
)


@pytest.fixture(scope="module")
def aila(aila_files):
    names = ("C10", "C500", "C469", "C1068", "C350", "C720", "C2500", "C303", "C1009")
    texts = aila_files.casedocs(names)
    return {name: texts[name] for name in names}


def test_lists_read_with_a_later_act_take_that_act(aila):
    sentence = next(l for l in aila["C500"].splitlines() if "read with Ss. 149 and 109, IPC" in l)
    ids = normalise_sections(sentence)
    assert {"IPC-120B", "IPC-148", "IPC-341", "IPC-147", "IPC-302", "IPC-149", "IPC-109"} <= set(ids)


def test_sections_of_an_act_outside_the_registry_are_dropped(aila):
    sentence = next(l for l in aila["C10"].splitlines() if "Tamil Nadu Buildings" in l)
    assert "s. 14(1)(b)" in sentence
    assert not any(i.startswith("IPC-") for i in normalise_sections(sentence))


@pytest.mark.parametrize("text, expected", [
    ("convicted under Section 302 of the Indian Penal Code", ["IPC-302"]),
    ("S. 302, I.P.C.", ["IPC-302"]),
    ("u/s. 498A of the IPC", ["IPC-498A"]),
    ("Section 304-A IPC", ["IPC-304A"]),
    ("bail under section 439 Cr.P.C.", ["CrPC-439"]),
    ("Section 9 of the Civil Procedure Code", ["CPC-9"]),
    ("s. 4 of the Evidence Act", ["IEA-4"]),
    ("Section 138 of the Negotiable Instruments Act", ["NIA-138"]),
    ("Section 103 BNS", ["BNS-103"]),
    ("Article 21 of the Constitution", ["Constitution-Article-21"]),
    ("Arts. 14 and 16", ["Constitution-Article-14", "Constitution-Article-16"]),
    ("Articles 14, 19 and 21", ["Constitution-Article-14", "Constitution-Article-19",
                                "Constitution-Article-21"]),
    ("the Code of Criminal Procedure (in short 'the Code'). Under Section 482 of the Code",
     ["CrPC-482"]),
    ("Section 14 of the Tamil Nadu Rent Act", []),
    ("Section 3 of the Arms Act", []),
])
def test_pattern_families(text, expected):
    assert normalise_sections(text) == expected


def test_mentions_carry_their_span():
    text = "He was convicted under Section 302 IPC."
    (mention,) = find_sections(text)
    assert mention.section_id == "IPC-302" and text[mention.start:mention.end] == mention.matched


@pytest.mark.parametrize("value", ["IPC 302", "ipc-302", "Section 302 IPC", "s. 302 I.P.C.", "IPC-302"])
def test_user_strings_parse(value):
    assert parse_section_id(value) == "IPC-302"


def test_user_article_strings_parse():
    assert parse_section_id("Art. 21") == parse_section_id("Constitution-Article-21") == \
        "Constitution-Article-21"
    assert parse_section_id("BNS 103") == "BNS-103"


@pytest.mark.parametrize("value", ["", "Section 99999 XYZ", "foo", "XYZ-302"])
def test_unknown_strings_raise_naming_the_input(value):
    with pytest.raises(UnknownSectionError) as error:
        parse_section_id(value)
    assert (repr(value) in str(error.value)) or (value == "" and "empty" in str(error.value))


def _line_with(doc: str, phrase: str) -> str:
    """The real line of a judgment that carries ``phrase`` (the test fails if it is not there)."""
    return next(line for line in doc.splitlines() if phrase in line)


def test_sub_clause_digits_are_not_article_numbers(aila):
    line = _line_with(aila["C469"], "articles 14, 19 (1) (g) and 31 of the Constitution")
    ids = normalise_sections(line)
    assert {"Constitution-Article-14", "Constitution-Article-19", "Constitution-Article-31"} <= set(ids)
    assert "Constitution-Article-1" not in ids


@pytest.mark.parametrize("doc, phrase, expected", [
    ("C1068", "u/s. 304 Part II read with S. 34 of the Indian Penal Code", {"IPC-304", "IPC-34"}),
    ("C350", "Sections 143, 147, 148, 302, 342 and 324 r/w 149 of Indian Penal Code",
     {"IPC-143", "IPC-147", "IPC-148", "IPC-302", "IPC-342", "IPC-324", "IPC-149"}),
    ("C720", "Sections 147 IPC, 302 IPC, 395 lPC and 436 lPC read with Section 149 IPC",
     {"IPC-147", "IPC-302", "IPC-395", "IPC-436", "IPC-149"}),
    ("C303", "section 149 or section 34 of the Penal Code", {"IPC-149", "IPC-34"}),
])
def test_real_lists_parts_and_per_item_acts(aila, doc, phrase, expected):
    assert phrase in aila[doc]
    assert set(normalise_sections(phrase)) == expected


def test_articles_of_other_instruments_are_not_constitution_articles(aila):
    phrase = "Article 5 of the Universal Declaration of Human Rights"
    assert phrase in aila["C2500"]
    assert normalise_sections(phrase) == []


def test_a_defined_short_name_maps_for_the_rest_of_the_text(aila):
    text = aila["C1009"]
    assert 'Code of Criminal Procedure, 1973, hereinafter called "the Code"' in text
    assert "S. 190 of the Code" in text
    assert "CrPC-190" in normalise_sections(text)
    # without the definition "the Code" is not guessed
    assert normalise_sections("an interpretation of S. 190 of the Code") == []


def test_sorted_by_registry_order_then_number():
    text = "Article 21, Section 439 Cr.P.C., Section 302 IPC, Section 34 IPC, Section 120B IPC"
    assert normalise_sections(text) == ["IPC-34", "IPC-120B", "IPC-302", "CrPC-439",
                                        "Constitution-Article-21"]


def test_section_keyword_spellings():
    assert normalise_sections("Sec. 302 IPC") == ["IPC-302"]
    assert normalise_sections("u/s 302 IPC") == ["IPC-302"]
    assert normalise_sections("Section 14(1)(b) of the Hindu Marriage Act") == ["HMA-14"]
    assert normalise_sections("Art. 14") == ["Constitution-Article-14"]


def test_parse_section_id_more_variants():
    assert parse_section_id("Article 21") == "Constitution-Article-21"
    assert parse_section_id("crpc 439") == "CrPC-439"
    assert parse_section_id("IPC-498a") == "IPC-498A"
    with pytest.raises(UnknownSectionError, match="Section 14 of the Tamil Nadu Rent Act"):
        parse_section_id("Section 14 of the Tamil Nadu Rent Act")


def test_whole_judgments_give_canonical_ids(aila):
    # (its speed is a benchmark's concern, not a timed test's: a loaded machine fails those)
    text = "\n".join(aila.values()) * 5
    found = normalise_sections(text)
    assert found and all(parse_section_id(s) == s for s in found)
