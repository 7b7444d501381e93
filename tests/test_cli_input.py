"""User mistakes on the command line (issue: hardening): each exits 2 with one line naming the
input, before any expensive work and before anything is written."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("k", ["0", "-1"])
def test_search_wants_one_result_or_more(run_cli, k):
    code, _, err = run_cli("search", "a dying declaration", "--k", k)
    assert code == 2 and f"--k {k}" in err and len(err.strip().splitlines()) == 1


def test_ingest_names_a_file_given_for_a_folder(run_cli, tmp_path, pdf_dir):
    pdf = sorted(pdf_dir.glob("*.pdf"))[0]
    code, _, err = run_cli("ingest", "--pdfs", str(pdf), "--out", str(tmp_path / "out"))
    assert code == 2 and "is a file, not a folder" in err and str(pdf) in err
    assert not (tmp_path / "out").exists()


def test_ingest_checks_its_outputs_before_reading(run_cli, tmp_path, pdf_dir):
    taken = tmp_path / "taken"
    taken.write_text("x")
    code, _, err = run_cli("ingest", "--pdfs", str(pdf_dir), "--out", str(taken))
    assert code == 2 and "output folder" in err and "is a file" in err
    code, _, err = run_cli("ingest", "--pdfs", str(pdf_dir), "--out", str(tmp_path / "out"),
                           "--metrics", str(taken / "m.json"))
    assert code == 2 and "cannot write metrics file" in err
    assert not (tmp_path / "out").exists()  # nothing was read or written


def test_tune_names_a_missing_folder(run_cli, tmp_path):
    code, _, err = run_cli("tune", "--aila-dir", str(tmp_path / "nope"))
    assert code == 2 and "AILA folder not found" in err


@pytest.mark.slow  # the rules read 200 KB of text by design
def test_factsheet_reads_long_text_from_a_file_and_names_empty_input(run_cli, tmp_path, aila_files):
    code, _, err = run_cli("factsheet", "")
    assert code == 2 and "empty text" in err
    code, _, err = run_cli("factsheet", "--file", str(tmp_path))
    assert code == 2 and "is a folder" in err
    long = tmp_path / "case.txt"
    text = aila_files.queries()["AILA_Q30"]
    long.write_text(text * (200_000 // len(text) + 1), encoding="utf-8")  # over 128 KiB
    code, out, _ = run_cli("factsheet", "--text-file", str(long), "--json")
    assert code in (0, None) and '"case_id": "text"' in out


def test_ingest_of_nothing_readable_is_an_error_not_an_empty_corpus(run_cli, tmp_path, pdf_dir):
    """A PDF folder whose only file is damaged (a real PDF cut short) read 0 documents with
    exit 0; the failure is kept and named."""
    folder = tmp_path / "pdfs"
    folder.mkdir()
    real = sorted(pdf_dir.glob("*.pdf"))[0]
    (folder / "cut.pdf").write_bytes(real.read_bytes()[:300])
    code, _, err = run_cli("ingest", "--pdfs", str(folder), "--out", str(tmp_path / "out"))
    assert code == 2 and "no document could be read (1 failures" in err, err
    assert (tmp_path / "out" / "failures.jsonl").read_text().count("cut.pdf") == 1
