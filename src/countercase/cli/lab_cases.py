"""``countercase lab``'s validity case lists: which corpus cases the validity experiments run
(validity-cases, v1 and v2), how many yield a matched pair (validity-feasibility), and v3's list
(validity-v3-cases).

The preregistrations name two of them by their old top-level names (``countercase
validity-cases``, ``countercase validity-v3-cases``); those still run, hidden from ``--help``.
"""

from __future__ import annotations

import json
import logging
import math
from collections import Counter
from pathlib import Path
from typing import Optional

import pandas as pd
import typer

from countercase import layout
from countercase.cli.base import (CHUNKS_OPTION, CITATIONS_OPTION, GROUPS_OPTION, PARAMS_OPTION,
                                  TARGETS_OPTION, CaseFiles, UserError, app, case_files,
                                  index_paths, require)
from countercase.cli.counterfactual import case_sets
from countercase.cli.lab import lab
from countercase.config import load_params
from countercase.confirm.cases import confirmatory_cases
from countercase.confirm.matching import Mass
from countercase.confirm.pairs import case_pairs, successors
from countercase.confirm.prereg import read_settings
from countercase.confirm.run import Corpus, Inputs as V2Inputs
from countercase.confirm.v3 import SETTINGS, Inputs as V3Inputs, eligible, feasibility, read_targets
from countercase.datasets.citations import read_citations
from countercase.index.bm25 import Bm25Searcher
from countercase.layout import IndexPaths
from countercase.runtime.digests import sha256_files

log = logging.getLogger("countercase")


@lab.command("validity-cases")
def validity_cases(
    out: Path = typer.Option(layout.VALIDITY_V2_CASES, help="The case list to write."),
    citations: Path = CITATIONS_OPTION,
    groups: Path = GROUPS_OPTION,
    gold: Path = typer.Option(layout.GOLD, help="The labelled files."),
    chunks: Path = CHUNKS_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The confirmatory validity cases in their seeded order (docs/preregistration/
    validity_v2.md, section 8), written one id a line; prints how many were left out, and why,
    and the list's SHA-256 for the preregistration."""
    require(citations, "citation collection (stage `citations`)")
    require(groups, "citation groups (stage `train_reranker`)")
    require(chunks, "chunk table (stage `extract`)")
    params = load_params(params_path)
    p = params.perturb
    corpus = set(pd.read_parquet(chunks, columns=["doc_id"])["doc_id"])
    # v1 searched its tuning and validity cases; the legal audit's labellers read the cases of
    # its samples, which its files name
    order, left_out = confirmatory_cases(citations, groups, gold, corpus, params.seed,
                                         p.tuning_cases + p.corpus_cases)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(f"{qid}\n" for qid in order), encoding="utf-8")
    typer.echo(json.dumps({"cases": len(order), "left_out": left_out,
                           "sha256": sha256_files(out), "file": str(out)}, indent=1))


@lab.command("validity-feasibility")
@index_paths
@case_files
def validity_feasibility(
    paths: IndexPaths,
    files: CaseFiles,
    tolerance: list[float] = typer.Option([0.1, 0.25, 0.5], help="Tolerances to count at."),
    per_type: Optional[int] = typer.Option(None, min=1, help="Root edits per fact type "
                                           "(default: params.yaml perturb.per_type)."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """How many operative edits of v1's validity cases (development cases) find a matched
    placebo at each tolerance, by fact type: texts and document frequencies only, never a
    ranking (docs/preregistration/validity_v2.md, section 10)."""
    bad = [t for t in tolerance if not (math.isfinite(t) and t > 0)]
    if bad:
        raise UserError(f"--tolerance {bad[0]}: give a share of the edit's mass above 0")
    params = load_params(params_path)
    sets = case_sets(params, files)
    corpus = Corpus(V2Inputs(paths, documents=files.documents, sheets=files.sheets))
    table = pd.read_parquet(files.edges)
    successor = successors(table)
    found = {}
    with Bm25Searcher(paths.index_dir / "precedents_chunks") as searcher:
        mass = Mass(searcher.analyze, searcher.idf)
        for level in tolerance:
            counts: Counter = Counter()
            cases_with_pairs = 0
            for case in sets.validity:
                pairs, left = case_pairs(case, table, per_type or params.perturb.per_type,
                                         corpus.reasons(case.cited), mass, successor, level)
                cases_with_pairs += bool(pairs)
                counts.update(f"{p.fact_type}/matched" for p in pairs)
                counts.update(f"{r['fact_type']}/{r['reason']}" for r in left)
            found[str(level)] = {"cases": len(sets.validity),
                                 "cases_with_a_pair": cases_with_pairs,
                                 "edits": dict(sorted(counts.items()))}
    typer.echo(json.dumps(found, indent=1))


@lab.command("validity-v3-cases")
@index_paths
def validity_v3_cases(
    paths: IndexPaths,
    targets: Path = TARGETS_OPTION,
    citations: Path = CITATIONS_OPTION,
    part: str = typer.Option("heldout", help="The citation collection's part (tuning: a pilot)."),
    out: Optional[Path] = typer.Option(None, help="Write the list here (the preregistration's "
                                       "cases_file)."),
    prereg: Path = typer.Option(layout.VALIDITY_V3, help="Its settings (tolerance, per_type)."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """v3's case list: every citation case of PART with an edit whose whole-graph targets are
    not empty, and how many yield a matched pair (texts and document frequencies, no ranking)."""
    require(targets, "targets (stage `targets`)")
    ids = eligible(read_targets(targets), read_citations(citations).part, part)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("\n".join(ids) + "\n", encoding="utf-8")
    inputs = V3Inputs(paths, citations, targets=targets, prereg=prereg)
    settings = read_settings(prereg, SETTINGS)
    print(json.dumps(feasibility(ids, inputs, load_params(params_path), settings), indent=2))


# the names the frozen preregistrations give them
app.command("validity-cases", hidden=True)(validity_cases)
app.command("validity-v3-cases", hidden=True)(validity_v3_cases)
