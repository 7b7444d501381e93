"""Render the Quarto manuscript ``paper/paper.qmd`` to HTML and PDF.

With Quarto installed, ``quarto render`` does it (the manuscript declares both formats). Quarto
cannot be installed from the registries these machines reach, so the fallback runs the same
cells and hands their output to pandoc, as Quarto does:

1. jupytext reads the ``.qmd`` (its ```` ```{python} ```` cells) and nbclient executes it in the
   manuscript's folder; a failing cell (a missing metrics file among them) stops the render with
   a :class:`PaperError` naming the error.
2. The executed cells become Markdown: prose as written, each cell's Markdown output in place, each
   figure a PNG with its ``#| fig-cap:`` caption and ``#| label:``.
3. pandoc (the ``pypandoc-binary`` package) resolves the citations against the bibliography
   (``--citeproc``) and writes a self-contained HTML page and a Typst document, which the ``typst``
   package compiles to the PDF.

The render is committed (``paper/paper.pdf``, ``paper/paper.html``) with ``paper/manifest.json``:
the SHA-256 of every project file the cells opened for reading (recorded in the kernel while
they run), so a test can tell when a committed metric has moved since the render. A PDF is not
byte-reproducible, so the manifest's own hash is written into the PDF's and the HTML's metadata
instead. What only the pipeline writes is read from small committed copies (``paper/inputs``),
refreshed from the pipeline's outputs where they exist (:func:`refresh_inputs`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import yaml

from countercase.errors import CountercaseError
from countercase.report import build
from countercase.runtime.digests import sha256_files

log = logging.getLogger(__name__)

# Quarto's own keys: pandoc would print them or warn
QUARTO_ONLY = ("format", "jupyter", "execute", "engine", "crossref")
OPTION = re.compile(r"^#\|\s*([\w-]+)\s*:\s*(.*)$")
INLINE = re.compile(r"`\{python\}\s+([^`]+)`")  # Quarto's inline expressions


class PaperError(CountercaseError):
    """The manuscript cannot be rendered: a cell failed or a tool is missing."""


# what a rendered paper must not say: a value a cell failed to find, or a count left in the
# singular-or-plural shorthand of a log line
STALE = {"None": r"\bNone\b", "nan": r"\b(?:nan|NaN)\b", "not measured": r"not measured",
         "(s)": r"\w\(s\)"}


def stale_phrases(text: str) -> list[str]:
    """The phrases of :data:`STALE` that ``text`` (a rendered paper's) holds."""
    return [name for name, pattern in STALE.items() if re.search(pattern, text)]


# a number the text states: a decimal of two places or more (scores, p values, intervals)
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d{2,}(?!\d)")
# The decimals the prose may type, each a constant fixed before any run and not a measurement;
# every other number the paper states is a cell's output, computed from the inputs the
# manifest hashes.
TYPED = {"0.001": "the margin of the choice rules (configs/*_rule.yaml), fixed before their runs",
         "0.05": "the significance level of the tables' Holm-corrected tests",
         "0.01": "the preregistered significance level of the v2 test",
         "39.15": "a result quoted from the literature (IL-PCR's micro-F1@K, joshi2023ucreat)"}


# the identifiers the bibliography prints (citeproc's, from references.bib): not numbers
BIBLIOGRAPHIC = re.compile(r"(?:doi\.org/|arxiv\.org/abs/|arXiv:)\S+", re.IGNORECASE)


def prose(text: str) -> str:
    """The manuscript's own words: its code cells and inline expressions left out."""
    _, body = split_front_matter(text)
    return INLINE.sub("", re.sub(r"```\{python\}.*?```", "", body, flags=re.S))


def typed_numbers(text: str) -> list[str]:
    """The decimals the manuscript ``text`` types in its prose that :data:`TYPED` does not
    allow, each with its line: a number a cell should compute from its input."""
    found = []
    for line in prose(text).splitlines():
        found += [f"{number} ({line.strip()[:60]}...)" for number in DECIMAL.findall(line)
                  if number not in TYPED]
    return found


def printed_numbers(notebook) -> list[str]:
    """The decimals the executed manuscript's cells print (Markdown and text outputs)."""
    found = set()
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            data = output.get("data", {})
            found.update(DECIMAL.findall(output.get("text", "") + data.get("text/markdown", "")))
    return sorted(found)


def unprinted_numbers(text: str, printed: list[str]) -> list[str]:
    """The decimals of a rendered paper's ``text`` that no cell printed and :data:`TYPED` does
    not allow: a number typed into the paper, or left from another render."""
    allowed = set(printed) | set(TYPED)
    return sorted({number for number in DECIMAL.findall(BIBLIOGRAPHIC.sub(" ", text))
                   if number not in allowed})


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The YAML header of a Quarto/pandoc Markdown file and the body after it."""
    if not text.startswith("---"):
        return {}, text
    end = text.find("\n---", 3)
    if end < 0:
        raise PaperError("the manuscript's YAML header is not closed by '---'")
    front = yaml.safe_load(text[3:end]) or {}
    if not isinstance(front, dict):
        raise PaperError("the manuscript's YAML header is not a mapping")
    return front, text[end + 4:].lstrip("\n")


# run before the manuscript's cells and after them: every file opened for reading is recorded
_RECORD_READS = """\
import builtins as _builtins, io as _io, os as _os
_paper_reads, _paper_open = set(), _builtins.open
def _recording_open(file, mode="r", *args, **kwargs):
    if isinstance(file, (str, _os.PathLike)) and not set(mode) & set("wax+"):
        _paper_reads.add(_os.path.abspath(_os.fspath(file)))
    return _paper_open(file, mode, *args, **kwargs)
_builtins.open = _io.open = _recording_open
"""
_READS = "__paper_reads__"
_REPORT_READS = f"import json as _json\nprint({_READS!r} + _json.dumps(sorted(_paper_reads)))"


def execute(source: Path, timeout_s: int = 900):
    """The manuscript as an executed notebook (cells run in the manuscript's folder) and the
    absolute paths of the files its cells opened for reading."""
    import jupytext
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    text = source.read_text(encoding="utf-8")
    typed = typed_numbers(text)
    if typed:
        raise PaperError(f"{source} types numbers a cell should compute from its input: "
                         + "; ".join(typed))
    _, body = split_front_matter(text)
    # the R Markdown reader parses the same ```{python} cells that Quarto runs
    notebook = inline_cells(jupytext.reads(body, fmt="Rmd"))
    notebook.cells = [nbformat.v4.new_code_cell(_RECORD_READS), *notebook.cells,
                      nbformat.v4.new_code_cell(_REPORT_READS)]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    try:
        NotebookClient(notebook, timeout=timeout_s, kernel_name="python3",
                       resources={"metadata": {"path": str(source.parent.resolve())}}).execute()
    except CellExecutionError as error:
        raise PaperError(f"{source}: a cell failed: {error.ename}: {error.evalue}") from None
    report = notebook.cells.pop()
    notebook.cells.pop(0)
    text = "".join(o.get("text", "") for o in report.get("outputs", []))
    reads = json.loads(text[text.index(_READS) + len(_READS):]) if _READS in text else []
    return notebook, [Path(p) for p in reads]


def refresh_inputs(root: Path, copies: dict[Path, Path]) -> list[Path]:
    """Copy each pipeline output the paper reads onto its committed copy where the pipeline
    has written it; return the copies refreshed. A copy with neither is a PaperError naming
    the stage output to build."""
    refreshed = []
    for produced, copy in copies.items():
        if (root / produced).is_file():
            (root / copy).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / produced, root / copy)
            refreshed.append(copy)
        elif not (root / copy).is_file():
            raise PaperError(f"{copy} is missing and so is {produced}, which it copies: run "
                             "`dvc repro` (the paper reads it)")
    return refreshed


# wall-clock timings: read by the render (the stage-times table) but written by every stage
# after it runs, the paper's own included, so they are hashed apart and left out of the digest
TIMINGS = "metrics/timing/"
# the fresh `make repro` whose outputs the paper reads (issue 61 item 5): an input, not a timing,
# so a new build stales the render until it is rendered again
BUILD_RECORD = "metrics/timing/repro.json"


def manifest(reads: list[Path], root: Path, outputs: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The inputs of a render: every project file it read (``.venv`` and the package's own
    code left out, as are the render's outputs), path -> SHA-256, and the hash of that table;
    the timings it read beside them, outside the hash."""
    root = root.resolve()
    skip = {(root / o).resolve() for o in outputs}
    inputs, timings = {}, {}
    for path in sorted({Path(p).resolve() for p in reads}):
        if path in skip or not path.is_file() or root not in path.parents:
            continue
        relative = path.relative_to(root)
        if relative.parts[0] in (".venv", "src", ".git"):
            continue
        timing = relative.as_posix().startswith(TIMINGS) and relative.as_posix() != BUILD_RECORD
        found = timings if timing else inputs
        found[relative.as_posix()] = sha256_files(path)
    digest = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()
    return {"sha256": digest, "inputs": inputs, "timings": timings}


def stale_inputs(recorded: dict[str, Any], root: Path) -> list[str]:
    """The manifest's inputs whose file is gone or differs from the render's."""
    return [p for p, digest in recorded["inputs"].items()
            if not (root / p).is_file() or sha256_files(root / p) != digest]


META = "countercase-manifest"


def stamp(html: Path, pdf: Path | None, digest: str) -> None:
    """Write the manifest's hash into the HTML's head and the PDF's document information."""
    text = html.read_text(encoding="utf-8")
    tag = f'<meta name="{META}" content="sha256:{digest}" />'
    html.write_text(text.replace("<head>", f"<head>\n{tag}", 1), encoding="utf-8")
    if pdf is not None and pdf.is_file():
        from pypdf import PdfReader, PdfWriter

        writer = PdfWriter(clone_from=PdfReader(pdf))
        writer.add_metadata({"/Keywords": f"{META} sha256:{digest}"})
        with pdf.open("wb") as handle:
            writer.write(handle)


def stamped(html: Path, pdf: Path) -> tuple[str | None, str | None]:
    """The manifest hash the HTML's and the PDF's metadata carry (None where absent)."""
    from pypdf import PdfReader

    found = re.search(rf'<meta name="{META}" content="sha256:([0-9a-f]+)"',
                       html.read_text(encoding="utf-8"))
    keywords = (PdfReader(pdf).metadata or {}).get("/Keywords", "")
    in_pdf = re.search(r"sha256:([0-9a-f]+)", str(keywords))
    return (found.group(1) if found else None), (in_pdf.group(1) if in_pdf else None)


def inline_cells(notebook):
    """Prose with inline expressions (`` `{python} expr` ``) becomes a cell that prints the
    prose as Markdown with each expression's value, evaluated after the cells before it, as
    Quarto does."""
    import nbformat

    cells = []
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and INLINE.search(cell.source):
            pieces = INLINE.split(cell.source)
            joined = ", ".join(repr(p) if i % 2 == 0 else f"str({p.strip()})"
                               for i, p in enumerate(pieces))
            code = ("from IPython.display import Markdown as _Markdown, display as _display\n"
                    f"_display(_Markdown(''.join([{joined}])))")
            cell = nbformat.v4.new_code_cell(code)
        cells.append(cell)
    notebook.cells = cells
    return notebook


def cell_options(code: str) -> dict[str, str]:
    """Quarto's ``#| key: value`` cell options."""
    found = {}
    for line in code.splitlines():
        match = OPTION.match(line.strip())
        if match:
            found[match.group(1)] = match.group(2).strip().strip('"').strip("'")
    return found


_CROSSREF = re.compile(r"(?<![\w@\[])@((fig|sec|tbl)-[\w-]+)")
_HEADER = re.compile(r"^#+\s+(.*?)\s*\{#(sec-[\w-]+)\}", re.MULTILINE)
_FIGURE = re.compile(r"\{#(fig-[\w-]+)\}")


def crossrefs(text: str) -> str:
    """Quarto's cross-references as links to their anchors, which pandoc alone would read as
    citations of unknown keys: ``@sec-x`` named by its section's title, ``@fig-x`` by its
    figure's number in order of appearance."""
    titles = {key: title for title, key in _HEADER.findall(text)}
    figures = {key: n for n, key in enumerate(dict.fromkeys(_FIGURE.findall(text)), start=1)}

    def link(match: re.Match) -> str:
        key, kind = match.group(1), match.group(2)
        name = (f'section "{titles[key]}"' if key in titles else f"Figure {figures[key]}"
                if key in figures else {"fig": "the figure", "sec": "the section",
                                        "tbl": "the table"}[kind])
        return f"[{name}](#{key})"
    return _CROSSREF.sub(link, text)


def to_markdown(notebook, figures: Path) -> str:
    """The executed notebook as pandoc Markdown; figures are written into ``figures``."""
    figures.mkdir(parents=True, exist_ok=True)
    parts, n_figures = [], 0
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            parts.append(cell.source)
            continue
        if cell.cell_type != "code":
            continue
        options = cell_options(cell.source)
        for output in cell.get("outputs", []):
            kind = output.get("output_type")
            if kind == "stream":
                if output.get("name") == "stdout" and output.get("text", "").strip():
                    parts.append("```\n" + output["text"].rstrip() + "\n```")
                continue
            data = output.get("data", {})
            if "image/png" in data:
                n_figures += 1
                name = f"{options.get('label', f'fig-{n_figures}')}.png"
                (figures / name).write_bytes(base64.b64decode(data["image/png"]))
                caption = options.get("fig-cap", "")
                label = options.get("label", "")
                anchor = f"{{#{label}}}" if label.startswith("fig-") else ""
                parts.append(f"![{caption}]({name}){anchor}")
            elif "text/markdown" in data:
                parts.append(data["text/markdown"])
    return crossrefs("\n\n".join(p.strip("\n") for p in parts if p.strip())) + "\n"


TYPST_TABLES = "#show table: set text(size: 7.5pt)"


def _pandoc(markdown: Path, to: str, out: Path, extra: list[str]) -> None:
    import pypandoc

    pypandoc.convert_file(str(markdown), to, outputfile=str(out),
                          extra_args=["--standalone", "--citeproc", *extra])


def render_fallback(source: Path, out_html: Path, out_pdf: Path | None,
                    timeout_s: int = 900, notebook=None) -> None:
    front, _ = split_front_matter(source.read_text(encoding="utf-8"))
    notebook = notebook if notebook is not None else execute(source, timeout_s)[0]
    with tempfile.TemporaryDirectory(prefix="paper-") as tmp:
        build = Path(tmp)
        meta = {k: v for k, v in front.items() if k not in QUARTO_ONLY}
        if "bibliography" in meta:
            bib = (source.parent / meta["bibliography"]).resolve()
            if not bib.is_file():
                raise PaperError(f"the bibliography {bib} named by {source} is not there")
            meta["bibliography"] = str(bib)
        markdown = build / "paper.md"
        body = to_markdown(notebook, build)
        markdown.write_text("---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
                            + "---\n\n" + body, encoding="utf-8")
        css = source.parent / "paper.css"
        _pandoc(markdown, "html5", out_html,
                ["--embed-resources", f"--resource-path={build}", "--toc", "--number-sections",
                 *([f"--css={css}"] if css.is_file() else [])])
        if out_pdf is not None:
            import typst

            typ = build / "paper.typ"
            # The metric tables have ten columns: at the body's size Typst shrinks the first
            # column until the condition names run into the numbers.
            _pandoc(markdown, "typst", typ, [f"--resource-path={build}", "--number-sections",
                                             f"--variable=header-includes={TYPST_TABLES}"])
            try:
                typst.compile(str(typ), output=str(out_pdf), root=str(build))
            except Exception as error:  # typst's own error type carries the source position
                raise PaperError(f"typst could not compile {source}'s PDF: {error}") from None


def render_paper(source: Path, out_html: Path, out_pdf: Path | None = None,
                 timeout_s: int = 900, manifest_path: Path | None = None,
                 root: Path | None = None) -> str:
    """Render ``source`` to ``out_html`` (and ``out_pdf``); return which renderer ran
    ("quarto" or "pandoc"). With ``manifest_path``, the inputs the cells read (under ``root``,
    default the manuscript's parent folder) are written there and the manifest's hash into
    the outputs' metadata."""
    out_html.parent.mkdir(parents=True, exist_ok=True)
    notebook, reads = execute(source, timeout_s)  # Quarto runs the cells again itself
    renderer = _render(source, out_html, out_pdf, timeout_s, notebook)
    front, _ = split_front_matter(source.read_text(encoding="utf-8"))
    # read outside the kernel: the manuscript, its bibliography and its style
    reads += [source, *([source.parent / front["bibliography"]] if "bibliography" in front
                        else []), source.parent / "paper.css"]
    if manifest_path is not None:
        root = Path(root) if root is not None else source.resolve().parent.parent
        found = manifest(reads, root, (out_html, out_pdf, manifest_path) if out_pdf
                         else (out_html, manifest_path))
        found["numbers"] = printed_numbers(notebook)
        record = build.read(root, required=False)
        if record is not None:  # which build each input came from (metrics/build.json)
            found["build"] = {"commit": record["commit"], "runs": sorted(record["runs"]),
                              "inputs": build.provenance(list(found["inputs"]), root, record)}
        manifest_path.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n",
                                 encoding="utf-8")
        stamp(out_html, out_pdf, found["sha256"])
    return renderer


def _render(source: Path, out_html: Path, out_pdf: Path | None, timeout_s: int,
            notebook) -> str:
    quarto = shutil.which("quarto")
    if quarto:
        outdir = out_html.parent.resolve()
        subprocess.run([quarto, "render", str(source), "--output-dir", str(outdir)], check=True,
                       timeout=timeout_s)
        for rendered, wanted in ((outdir / (source.stem + ".html"), out_html),
                                 (outdir / (source.stem + ".pdf"), out_pdf)):
            if wanted is not None and rendered != wanted.resolve():
                rendered.replace(wanted)
        return "quarto"
    render_fallback(source, out_html, out_pdf, timeout_s, notebook)
    log.info("paper rendered with pandoc -> %s%s", out_html, f", {out_pdf}" if out_pdf else "")
    return "pandoc"
