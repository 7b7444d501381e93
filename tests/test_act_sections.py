"""Section references in real judgment sentences map to canonical ids; unknown acts never do."""

from __future__ import annotations

import tarfile

import pytest

from countercase.extract.act_sections import (
    UnknownSectionError, find_sections, normalise_sections, parse_section_id,
)


@pytest.fixture(scope="module")
def aila(raw_dir):
    with tarfile.open(raw_dir / "aila2019/Object_casedocs.tar.gz") as archive:
        return {name: archive.extractfile(f"Object_casedocs/{name}.txt").read().decode()
                for name in ("C10", "C500")}


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
