"""The paper's fallback renderer (no Quarto here): a small manuscript in the paper's own form
(a metrics file, an inline expression, a figure cell with its caption, a citation) rendered to
HTML and PDF, and what a reviewer would check in the PDF."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from countercase import layout
from countercase.report.paper import (PaperError, refresh_inputs, render_paper, split_front_matter,
                               stale_inputs, stamped)

ROOT = Path(__file__).resolve().parents[1]

MANUSCRIPT = '''---
title: "A small manuscript"
abstract: "It has one table, one figure and one reference."
bibliography: references.bib
format:
  html: default
  typst: default
jupyter: python3
---

```{python}
import json
from pathlib import Path
from IPython.display import Markdown
scores = json.loads(Path("scores.json").read_text())
```

# Results

BM25 alone scores MAP `{python} f"{scores['bm25']:.3f}"`, fused by RRF [@cormack2009rrf].

```{python}
#| label: fig-scores
#| fig-cap: "Scores per system."
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(3, 2))
ax.bar(list(scores), list(scores.values()), color="#1f4e79")
plt.show()
```

```{python}
Markdown("| system | MAP |\\n|---|---|\\n" + "\\n".join(f"| {k} | {v} |" for k, v in scores.items()))
```

# References

::: {#refs}
:::
'''


@pytest.fixture
def manuscript(tmp_path: Path) -> Path:
    (tmp_path / "scores.json").write_text(json.dumps({"bm25": 0.1234, "full": 0.165}))
    shutil.copy(ROOT / "paper" / "references.bib", tmp_path / "references.bib")
    source = tmp_path / "small.qmd"
    source.write_text(MANUSCRIPT, encoding="utf-8")
    return source


def test_a_manuscript_renders_to_html_and_pdf(manuscript, tmp_path):
    html, pdf = tmp_path / "out" / "small.html", tmp_path / "out" / "small.pdf"
    assert render_paper(manuscript, html, pdf) in ("pandoc", "quarto")
    page = html.read_text(encoding="utf-8")
    assert "0.123" in page and "{python}" not in page  # the inline expression evaluated
    assert "Cormack" in page and "[@cormack2009rrf]" not in page  # the citation resolved
    assert "data:image/png;base64" in page and "Scores per system." in page  # figure embedded
    assert "<table" in page and "0.165" in page

    import pypdfium2

    document = pypdfium2.PdfDocument(str(pdf))
    n_pages = len(document)
    assert n_pages >= 1
    text = "".join(document[i].get_textpage().get_text_range() for i in range(len(document)))
    assert "Cormack" in text and "Reciprocal Rank Fusion" in text  # the reference list
    assert "0.123" in text and "Scores per system." in text
    images = [o for i in range(len(document))
              for o in document[i].get_objects() if o.type == pypdfium2.raw.FPDF_PAGEOBJ_IMAGE]
    assert images, "the figure is embedded in the PDF"
    document.close()
    if shutil.which("pdftoppm"):
        subprocess.run(["pdftoppm", "-r", "30", "-png", str(pdf), str(tmp_path / "page")],
                       check=True)
        pages = sorted(tmp_path.glob("page*.png"))
        assert len(pages) == n_pages
        from PIL import Image

        for path in pages:  # not blank: some pixels are far from white
            grey = Image.open(path).convert("L")
            assert grey.getextrema()[0] < 100, f"{path.name} is blank"


def test_the_manifest_holds_what_the_render_read_and_the_outputs_carry_its_hash(manuscript,
                                                                               tmp_path):
    html, pdf, found = tmp_path / "out" / "s.html", tmp_path / "out" / "s.pdf", tmp_path / "m.json"
    render_paper(manuscript, html, pdf, manifest_path=found, root=tmp_path)
    recorded = json.loads(found.read_text())
    # read by a cell, and the manuscript and its bibliography; the outputs left out
    assert set(recorded["inputs"]) == {"scores.json", "small.qmd", "references.bib"}
    assert stamped(html, pdf) == (recorded["sha256"], recorded["sha256"])
    assert stale_inputs(recorded, tmp_path) == []
    (tmp_path / "scores.json").write_text(json.dumps({"bm25": 0.2}))
    assert stale_inputs(recorded, tmp_path) == ["scores.json"]  # a metric moved since


def test_the_pipeline_only_inputs_are_refreshed_or_read_from_their_committed_copy(tmp_path):
    produced, copy = Path("data/run/per_query.csv"), Path("paper/inputs/per_query.csv")
    with pytest.raises(PaperError, match="per_query.csv is missing.*dvc repro"):
        refresh_inputs(tmp_path, {produced: copy})
    (tmp_path / produced).parent.mkdir(parents=True)
    (tmp_path / produced).write_text("qid,MAP\n")
    assert refresh_inputs(tmp_path, {produced: copy}) == [copy]
    (tmp_path / produced).unlink()  # a clean clone: the committed copy is read
    assert refresh_inputs(tmp_path, {produced: copy}) == []
    assert (tmp_path / copy).read_text() == "qid,MAP\n"


def test_the_committed_paper_is_the_render_of_the_committed_inputs():
    manifest = ROOT / layout.PAPER_MANIFEST
    if not manifest.exists():
        pytest.skip("no committed render yet (countercase paper writes paper/manifest.json)")
    recorded = json.loads(manifest.read_text())
    moved = stale_inputs(recorded, ROOT)  # timings apart: every stage rewrites them
    assert not moved, f"committed inputs changed since the paper was rendered: {moved}"
    assert stamped(ROOT / layout.PAPER_HTML, ROOT / layout.PAPER_PDF) == (
        recorded["sha256"], recorded["sha256"])
    assert {str(c) for c in layout.PAPER_INPUTS.values()} <= set(recorded["inputs"])


def test_a_missing_input_stops_the_render_naming_it(manuscript, tmp_path):
    (tmp_path / "scores.json").unlink()
    with pytest.raises(PaperError, match="scores.json"):
        render_paper(manuscript, tmp_path / "x.html", tmp_path / "x.pdf")
    assert not (tmp_path / "x.html").exists()


def test_a_missing_bibliography_is_named(manuscript, tmp_path):
    (tmp_path / "references.bib").unlink()
    with pytest.raises(PaperError, match="references.bib"):
        render_paper(manuscript, tmp_path / "x.html", None)


def test_the_front_matter_is_read_and_checked():
    front, body = split_front_matter(MANUSCRIPT)
    assert front["title"] == "A small manuscript" and body.startswith("```{python}")
    assert split_front_matter("no header") == ({}, "no header")
    with pytest.raises(PaperError, match="not closed"):
        split_front_matter("---\ntitle: x\n")


def test_the_paper_cites_only_what_its_bibliography_holds():
    import re

    source = (ROOT / "paper" / "paper.qmd").read_text(encoding="utf-8")
    keys = set(re.findall(r"@([a-z]+\d{4}\w*)", source))
    known = set(re.findall(r"@\w+\{([^,]+),", (ROOT / "paper" / "references.bib").read_text()))
    assert keys and keys <= known, keys - known
    front, _ = split_front_matter(source)
    assert front["bibliography"] == "references.bib" and {"html", "typst"} <= set(front["format"])


def test_the_abstract_claims_only_what_the_committed_scores_show():
    """The abstract is prose (no cell can compute it): its two findings are checked against the
    stage outputs, so a rebuild that turns one of them fails here instead of in a reader."""
    import yaml

    abstract = " ".join(split_front_matter(
        (ROOT / "paper" / "paper.qmd").read_text(encoding="utf-8"))[0]["abstract"].split())
    retrieval = json.loads((ROOT / "metrics" / "retrieval.json").read_text())
    track = yaml.safe_load((ROOT / "paper" / "aila2019_track.yaml").read_text())
    import pandas as pd

    from countercase.config import load_params
    from countercase.report.headline import headline
    from countercase.retrieve.served import served_system

    served = served_system(load_params(ROOT / "params.yaml"), "precedents")
    rows = headline(pd.read_csv(ROOT / "paper/inputs/task1_per_query.csv"), "aila2019-task1",
                    served, 2019, resamples=2000).set_index("system")
    best = track["task1"]["MAP"]
    pipelines = [n for n in rows.index if not n.startswith("ltr")]
    # each claim the abstract makes, with what must hold for it to be true
    claims = {
        "On statutes the pipeline scores far above the track's best run":
            retrieval["aila2019-task2"]["full"]["MAP"] > 2 * track["task2"]["MAP"],
        "none of our pipelines, the learned ranker trained on the citation collection "
        "included, differs measurably from the track's best run":
            all(rows.at[n, "MAP_ci"][0] <= best <= rows.at[n, "MAP_ci"][1]
                for n in [*pipelines, "ltr"]),
        "that learned ranker scores below passage BM25":
            rows.at["ltr", "MAP"] < rows.at["bm25", "MAP"],
        "a case description is served by passage BM25 and a judgment's own text by the learned "
        "ranker": (lambda route: route["description"] == "bm25"
                   and route["judgment"].startswith("ltr"))(
            yaml.safe_load((ROOT / "configs/serving_choice.yaml").read_text())["route"])}
    wrong = [claim for claim, holds in claims.items() if claim in abstract and not holds]
    assert not wrong, wrong
    assert all(claim in abstract for claim in claims if claims[claim]), claims
    # the introduction's first contribution says the same in its own words
    text = " ".join((ROOT / "paper" / "paper.qmd").read_text(encoding="utf-8").split())
    assert ("so that a case description is served by chunk BM25" in text) == claims[
        "a case description is served by passage BM25 and a judgment's own text by the learned "
        "ranker"]
    validity = json.loads((ROOT / "metrics" / "counterfactual.json").read_text())["validity"]
    primary = validity["by_condition"][validity["primary"]]
    # the validity issue's target, set before the experiment: operative changes move the cited
    # precedents at least three times as far as placebos, at p < 0.01
    met = primary["ratio"] >= 3 and primary["p_value"] < 0.01
    assert ("largely negative" in abstract) == (not met), primary


def test_the_earlier_runs_the_paper_compares_with_are_verbatim_stage_outputs():
    import yaml

    history = ROOT / "paper" / "history"
    sources = yaml.safe_load((history / "sources.yaml").read_text())
    kept = {p.name for p in history.iterdir() if p.suffix in (".json", ".csv")}
    assert kept == set(sources)  # every kept report says where it comes from
    for name, source in sources.items():
        shown = subprocess.run(["git", "show", f"{source['commit']}:{source['path']}"], cwd=ROOT,
                               capture_output=True, text=True)
        if shown.returncode != 0:
            pytest.skip(f"commit {source['commit']} is not in this clone's history")
        assert (history / name).read_text() == shown.stdout, name


def test_a_rebuild_is_compared_number_by_number_without_its_timings():
    import json

    from countercase.report.rebuild import compare, numbers

    # the earlier build's tagger report against itself with two numbers moved: one in the
    # fourth decimal, one beyond the tolerance; its timings never count
    before = json.loads((ROOT / "paper" / "history" / "build_2fffdbe_ner.json").read_text())
    found = numbers(before)
    assert found and not any("seconds" in path for path in found)
    assert all(not isinstance(v, bool) for v in found.values())
    after = json.loads(json.dumps(before))
    after["dev"]["micro"]["f1"] = before["dev"]["micro"]["f1"] + 5e-5
    after["dev"]["micro"]["precision"] = before["dev"]["micro"]["precision"] + 0.01
    after["seconds"] = 1e9
    c = compare(before, after)
    assert (c.compared, c.identical, c.within) == (len(found), len(found) - 2, len(found) - 1)
    assert c.largest[0][0] == "dev/micro/precision" and not c.only_before and not c.only_after
    assert compare({"a": 1, "b": [2, 3]}, {"a": 1, "b": [2], "c": 4}).only_before == ["b/1"]
    assert numbers({"params_yaml_agrees": 1, "stages_ms": {"bm25": 3}, "p50_ms": 2}) == {
        "params_yaml_agrees": 1.0}


def test_the_rebuild_table_sets_each_kept_report_beside_the_current_one(tmp_path, capsys):
    import json
    import shutil

    from countercase.report.rebuild import main, summary, table

    shutil.copytree(ROOT / "paper" / "history", tmp_path / "paper" / "history")
    (tmp_path / "metrics").mkdir()
    for kept in (tmp_path / "paper" / "history").glob("build_2fffdbe_*.json"):
        shutil.copy(kept, tmp_path / "metrics" / kept.name.removeprefix("build_2fffdbe_"))
    ingest = json.loads((tmp_path / "metrics" / "ingest.json").read_text())
    ingest["n_failures"] = ingest.get("n_failures", 0) + 1
    (tmp_path / "metrics" / "ingest.json").write_text(json.dumps(ingest))
    rows = {line.split("|")[1].strip(): line for line in table(tmp_path).splitlines()[2:]}
    assert len(rows) == 11
    assert "n_failures 0 → 1" in rows["`ingest.json` (`2fffdbe`)"]
    assert rows["`ner.json` (`2fffdbe`)"].endswith("| 0 | none |")
    said = summary(tmp_path)  # what the paper's prose says: only ingest moved, by one number
    assert "`ner.json`" in said.split(". ")[0] and said.endswith("`ingest.json` (1 of 7).")
    ner = json.loads((tmp_path / "metrics" / "ner.json").read_text())
    ner["dev"]["micro"]["f1"] += 0.00005  # within the tolerance, no longer identical
    (tmp_path / "metrics" / "ner.json").write_text(json.dumps(ner))
    assert "within 0.0001 of the earlier build's: `ner.json`." in summary(tmp_path)
    (tmp_path / "metrics" / "tuning.json").unlink()
    assert main(["--root", str(tmp_path)]) == 1  # named, not a stack trace
    assert "metrics/tuning.json is missing" in capsys.readouterr().err


def test_the_levers_the_paper_reports_are_evaluate_conditions():
    """The paper's table of what each retrieval lever gave reads its conditions from
    paper/retrieval_levers.yaml: a renamed or dropped condition would silently empty a row."""
    import yaml

    from countercase.retrieve.registry import BY_NAME

    levers = yaml.safe_load((ROOT / "paper" / "retrieval_levers.yaml").read_text())
    named = [c for conditions in levers["levers"].values() for c in conditions]
    assert named and not [c for c in named if c not in BY_NAME]
    assert set(levers["targets"]) == {"aila2019-task1", "aila2019-task2", "latency_p50_ms"}


def test_the_committed_files_alone_render_the_committed_paper(tmp_path):
    """A clean clone renders the paper (its pipeline-only inputs from paper/inputs): the render
    reads the same inputs, byte for byte, as the committed one did."""
    manifest = ROOT / layout.PAPER_MANIFEST
    if not manifest.exists():
        pytest.skip("no committed render yet (countercase paper writes paper/manifest.json)")
    found = tmp_path / "manifest.json"
    render_paper(ROOT / layout.PAPER_SOURCE, tmp_path / "paper.html", tmp_path / "paper.pdf",
                 manifest_path=found, root=ROOT)
    again, committed = json.loads(found.read_text()), json.loads(manifest.read_text())
    assert again["inputs"] == committed["inputs"]
    assert again["sha256"] == committed["sha256"]
    assert stamped(tmp_path / "paper.html", tmp_path / "paper.pdf") == (again["sha256"],) * 2


def _committed_pdf_pages() -> list[str]:
    """The committed PDF's text, page by page (skips before a first render)."""
    import pypdfium2

    pdf = ROOT / layout.PAPER_PDF
    if not pdf.exists():
        pytest.skip("no committed render yet")
    document = pypdfium2.PdfDocument(str(pdf))
    try:
        return [document[i].get_textpage().get_text_range() for i in range(len(document))]
    finally:
        document.close()


def _committed_pdf_text() -> str:
    """The committed PDF's text, its pages joined (skips before a first render)."""
    return " ".join(_committed_pdf_pages())


def test_a_reviewer_reads_the_answers_in_the_committed_pdf():
    """The committed PDF answers a reviewer's five questions, each number as the metrics hold
    it: what is served, whether it beats the track (with its interval), the Task 2 leakage
    effect, the fact types' sensitivity against chance, who labelled the gold data."""
    import re

    import pandas as pd
    import yaml

    from countercase.config import load_params
    from countercase.report.headline import headline
    from countercase.retrieve.served import served_system

    text = re.sub(r"\s+", " ", _committed_pdf_text().replace("\u00ad", "")
                  .replace("\ufffe", "").replace("\u2019", "'"))
    start = text.index("Answers at a glance")
    glance = text[start:text.index("Introduction", start)]
    metrics = {name: json.loads((ROOT / "metrics" / f"{name}.json").read_text())
               for name in ("retrieval", "leakage", "counterfactual")}
    params = load_params(ROOT / "params.yaml")
    served = served_system(params, "precedents")
    assert f"What the served system is. {served}:" in glance
    track = yaml.safe_load((ROOT / "paper/aila2019_track.yaml").read_text())["task1"]
    per_query = pd.read_csv(ROOT / "paper/inputs/task1_per_query.csv")
    row = headline(per_query, "aila2019-task1", served, params.seed, track).set_index("system")
    score = metrics["retrieval"]["aila2019-task1"][served]["MAP"]
    low, high = row.at[served, "MAP_ci"]
    assert f"scores MAP {score:.4f} (95% bootstrap CI [{low:.4f}, {high:.4f}])" in glance
    assert f"the track's best run scored {track['MAP']}" in glance
    assert ("Does it beat the track? No." in glance) == (high < track["MAP"] or score < track["MAP"])
    leakage = metrics["leakage"]
    statute = served_system(params, "statutes")
    assert f"a drop of {leakage['drop']['MAP'][statute]:.4f}" in glance
    gold = metrics["counterfactual"]["validity"]["gold_against_chance"]
    assert (f"{gold['share_first']:.0%} of {gold['n_cases']} cases, against "
            f"{gold['chance_share']:.0%} by chance") in glance
    annotators = {json.loads(line)["annotator"] for line in
                  (ROOT / layout.DISPOSITIVE_GOLD).read_text().splitlines() if line}
    assert "AI annotators, not lawyers" in glance
    assert all(name in glance for name in annotators), annotators


def test_the_committed_pdf_says_nothing_stale_and_a_planted_phrase_is_found():
    """Issue 61 item 4: the committed PDF's text holds no "None", "nan", "not measured" or
    "(s)"; the check finds each one planted."""
    from countercase.report.paper import STALE, stale_phrases

    text = _committed_pdf_text()
    assert stale_phrases(text) == []
    for planted in ("the tagger scored None on dev", "a kappa of nan", "latency not measured",
                    "amended 1 time(s)"):
        assert len(stale_phrases(f"{text} {planted}")) == 1, planted
    assert set(STALE) == {"None", "nan", "not measured", "(s)"}


def test_quarto_cross_references_become_links_and_citations_stay():
    from countercase.report.paper import crossrefs

    text = ("# At a glance {#sec-glance}\n\n![one](a.png){#fig-one}\n\n![two](b.png){#fig-a-b}"
            "\n\nsee @fig-a-b, (@sec-glance); [@cormack2009rrf], x@y.z and @sec-none.")
    assert crossrefs(text).endswith(
        'see [Figure 2](#fig-a-b), ([section "At a glance"](#sec-glance)); [@cormack2009rrf], '
        "x@y.z and [the section](#sec-none).")


MAIN_BODY_PAGES = 16  # issue 61: at most 16 pages before the references and the appendix


def test_the_committed_pdf_keeps_its_main_body_short_and_marks_its_appendix():
    """Issue 61: the committed PDF's main body ends within 16 pages (the References heading
    stands on page 17 at the latest), and a heading naming the appendix comes after the
    references, so everything a user of the package needs is marked as the appendix."""
    import re

    pages = _committed_pdf_pages()
    lines = [(n, line.strip()) for n, page in enumerate(pages, start=1)
             for line in page.splitlines()]
    references = [n for n, line in lines if line == "References"]
    assert references, "no References heading in the committed PDF"
    assert references[0] <= MAIN_BODY_PAGES + 1, (
        f"the references begin on page {references[0]}: the main body runs past "
        f"{MAIN_BODY_PAGES} pages")
    at = next(i for i, (n, line) in enumerate(lines) if line == "References")
    after = [(n, line) for n, line in lines[at + 1:]
             if re.match(r"(?:[A-Z0-9.]+\s+)?Appendix\b", line)]
    assert after, "no heading marks the appendix after the references"
    assert after[0][0] >= references[0]
    # the main body still holds what a reviewer reads for
    main = " ".join(pages[:references[0]]).lower()
    for bar in ("leakage", "chance", "power", "annotat", "served system", "confidence interval",
                "preregist", "limitation"):
        assert bar in main, bar


def test_the_committed_paper_names_the_one_build_it_reads():
    """Issue 61 item 5: the paper names the build its numbers come from (metrics/build.json,
    a fresh `make repro`, metrics/timing/repro.json, at the same commit), which the manifest
    hashes, so a rebuild recorded after the render fails the manifest's test; and it says
    whether the opt-in pipeline ran at that commit, as the record says."""
    import re

    build = json.loads((ROOT / "metrics/timing/repro.json").read_text())
    record = json.loads((ROOT / "metrics/build.json").read_text())
    assert build["fresh"] is True and build["commit"] == record["commit"]
    recorded = json.loads((ROOT / layout.PAPER_MANIFEST).read_text())
    assert {"metrics/timing/repro.json", "metrics/build.json"} <= set(recorded["inputs"])
    text = re.sub(r"\s+", " ", _committed_pdf_text())
    assert f"one build of commit {record['commit'][:7]}: make repro on a fresh clone" in text
    # a line break inside "repro-extended" leaves U+FFFE in the PDF's text, not the hyphen
    opt_in = "then make reproextended" in text.replace("\ufffe", "").replace("-", "")
    assert opt_in == ("opt-in" in record["runs"])
    assert ("The opt-in pipeline has not run at that commit" in text) == (not opt_in)


def test_every_number_in_the_committed_pdf_is_printed_by_a_cell_and_a_planted_one_is_found():
    """Issue 61 item 4: every decimal the committed PDF states (scores, p values, intervals)
    is one its cells printed at the render, or a constant :data:`TYPED` names with its reason;
    the manifest's test holds the cells' inputs equal to the committed metrics, so no number in
    the PDF differs from what they compute from `metrics/`. A planted number is found."""
    from countercase.report.paper import DECIMAL, unprinted_numbers

    recorded = json.loads((ROOT / layout.PAPER_MANIFEST).read_text())
    assert "numbers" in recorded, "the committed manifest predates the number record: render again"
    text = _committed_pdf_text()
    assert len(DECIMAL.findall(text)) > 500  # the check reads the tables, not an empty page
    assert unprinted_numbers(text, recorded["numbers"]) == []
    assert unprinted_numbers(f"{text} MAP 0.98765 on Task 1", recorded["numbers"]) == ["0.98765"]


def test_the_prose_types_no_number_a_cell_should_compute_and_the_render_refuses_one(
        manuscript, tmp_path):
    """A decimal typed into the manuscript's prose (outside its cells and inline expressions)
    stops the render, naming it; the committed manuscript types none but :data:`TYPED`'s."""
    from countercase.report.paper import typed_numbers

    assert typed_numbers((ROOT / layout.PAPER_SOURCE).read_text(encoding="utf-8")) == []
    assert typed_numbers(MANUSCRIPT) == []  # 0.1234 is the inline expression's, not typed
    manuscript.write_text(MANUSCRIPT.replace("fused by RRF", "0.1234 fused by RRF"),
                          encoding="utf-8")
    with pytest.raises(PaperError, match=r"types numbers .*0\.1234 \(BM25 alone"):
        render_paper(manuscript, tmp_path / "x.html", tmp_path / "x.pdf")
