"""``countercase lab``: the tools that drew, blinded and scored the labelled samples and the
confirmatory experiments' case lists (the legal audits, the LLM check's calibration, the number
roles, the holding profiles' sample and scorer, the validity cases). They made the files of
``data/gold/`` and the preregistrations' lists; a user of the package never needs them, so they
live here, apart from the product's commands and the pipeline's stages.

The validity experiments' case lists are :mod:`countercase.cli.lab_cases`'s.
"""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path
from typing import Optional

import pandas as pd
import typer

from countercase import layout
from countercase.cli.base import (PARAMS_OPTION, CaseFiles, UserError, app, case_files,
                                  metrics_option, require, writable, write_json)
from countercase.cli.counterfactual import case_sets
from countercase.config import load_params
from countercase.factsheet.roles import sample_numbers
from countercase.factsheet.store import read_sheets
from countercase.holdings.run import fit_choice, sample
from countercase.ingest.run import read_documents
from countercase.perturb.audit import ENGINES, blind, draw, root_pool, summary, write_jsonl
from countercase.perturb.calibration import write_sample
from countercase.perturb.stage import legal_audit

log = logging.getLogger("countercase")
lab = typer.Typer(no_args_is_help=True, help="The tools that made the labelled samples and the "
                  "confirmatory case lists (data/gold/, docs/preregistration/).")
app.add_typer(lab, name="lab", rich_help_panel="Lab")


@lab.command("audit-sample")
@case_files
def audit_sample(
    files: CaseFiles,
    engine: str = typer.Option(..., help="Which engine the rules are: before or after."),
    per_type: int = typer.Option(40, min=1, help="Edges drawn per fact type (all if fewer)."),
    out: Path = typer.Option(layout.LEGAL_AUDIT, help="Folder of the audit's files."),
    exclude_labelled: bool = typer.Option(False, help="Leave out edges (case, change) that an "
                                          "earlier engine's sample holds."),
    fresh: int = typer.Option(0, min=0, help="Draw from this many cases after the validity "
                              "cases in the split (never used in development) instead."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The legal audit's sample of one engine: root perturbations of the validity cases (or of
    --fresh cases), up to --per-type of each fact type from a seeded shuffle
    (data/gold/legal_audit.md), written to sample_<engine>.jsonl with the engine's root edges per
    fact type (pool_<engine>.json)."""
    if engine not in ENGINES:
        raise UserError(f"--engine {engine!r}: use one of {', '.join(ENGINES)}")
    params = load_params(params_path)
    sets = case_sets(params, files, fresh)
    cases = sets.fresh if fresh else sets.validity
    pool = root_pool(cases, pd.read_parquet(files.edges), params.perturb.per_type, engine)
    candidates = pool
    if exclude_labelled:
        # an earlier engine's sample, and the LLM check's calibration sample, which stays apart
        # from every audit sample
        seen = {(row["case_id"], row["description"]) for e in ENGINES if e != engine
                if (out / f"sample_{e}.jsonl").exists()
                for row in map(json.loads, (out / f"sample_{e}.jsonl").open(encoding="utf-8"))}
        calibration = layout.LLM_CALIBRATION / "sample.jsonl"
        if calibration.exists():
            seen |= {(row["case_id"], row["description"])
                     for row in map(json.loads, calibration.open(encoding="utf-8"))}
        candidates = [r for r in pool if (r["case_id"], r["description"]) not in seen]
    sample = draw(candidates, per_type, params.seed)
    write_jsonl(out / f"sample_{engine}.jsonl", sample)
    write_json(out / f"pool_{engine}.json", {**summary(pool, len(cases)), "seed": params.seed,
                                             "cases": f"fresh {fresh}" if fresh else "validity",
                                             "per_type_drawn": per_type,
                                             "drawn": len(sample)})
    log.info("%d of %d root edges of %d cases drawn -> %s", len(sample), len(pool), len(cases),
             out / f"sample_{engine}.jsonl")


@lab.command("llm-calibration-sample")
@case_files
def llm_calibration_sample(
    files: CaseFiles,
    out: Path = typer.Option(layout.LLM_CALIBRATION, help="Folder of the labelled candidates."),
    audit: Path = typer.Option(layout.LEGAL_AUDIT, help="The legal audit's samples (left out)."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The LLM check's candidates to label (data/gold/llm_calibration.md): llm_check.calibration
    root candidates of the checked cases that no audit sample holds, by seed, in two halves."""
    params = load_params(params_path)
    cases = case_sets(params, files).validity[:params.llm_check.cases]
    pool = root_pool(cases, pd.read_parquet(files.edges), params.perturb.per_type, "calibration")
    sample = write_sample(pool, audit, out, params.llm_check.calibration, params.seed)
    log.info("%d of %d candidates drawn (%d in the tuning half) -> %s", len(sample), len(pool),
             sum(r["split"] == "tune" for r in sample), out)


@lab.command("roles-sample")
def roles_sample(
    per_kind: int = typer.Option(40, min=1, help="Numbers drawn per kind (all if fewer)."),
    out: Path = typer.Option(layout.NUMBER_ROLES_SAMPLE, help="Where the sample goes (JSONL)."),
    documents: Path = typer.Option(layout.DOCUMENTS, help="Judgment texts."),
    sheets: Path = typer.Option(layout.JUDGMENT_SHEETS, help="The judgments' fact sheets."),
    seed: Optional[int] = typer.Option(None, help="The draw's seed (default: params.yaml seed)."),
    exclude: Optional[Path] = typer.Option(None, help="A sample whose numbers are not drawn."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Numbers of the judgments' fact sheets for a labeller to give their roles
    (data/gold/number_roles.md): up to --per-kind ages, amounts and durations by seed, none of
    them in --exclude (a second sample measures rules written after the first was read)."""
    require(documents, "documents file")
    require(sheets, "fact sheets (stage `factsheets`)")
    params = load_params(params_path)
    texts = {d.doc_id: d.text for d in read_documents(documents)}
    taken = set()
    if exclude is not None:
        require(exclude, "sample to exclude")
        taken = {json.loads(line)["item"] for line in exclude.open(encoding="utf-8")}
    drawn = sample_numbers(read_sheets(sheets), texts, per_kind,
                           params.seed if seed is None else seed, exclude=taken)
    write_jsonl(out, drawn)
    log.info("%d numbers -> %s", len(drawn), out)


@lab.command("audit-blind")
def audit_blind(
    out: Path = typer.Option(layout.LEGAL_AUDIT, help="Folder of the audit's files."),
    second: int = typer.Option(80, min=1, help="Items the second labeller labels too."),
    engines: str = typer.Option("before,after", help="The engines whose samples are merged."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The legal audit's file to label: the engines' samples in one seeded shuffle, without the
    engine (to_label.jsonl), and the second labeller's seeded subsample (to_label_second.jsonl);
    other engines than before,after write to_label_<engines>.jsonl and its _second."""
    chosen = [e.strip() for e in engines.split(",") if e.strip()]
    suffix = "" if chosen == ["before", "after"] else "_" + "_".join(chosen)
    samples = []
    for engine in chosen:
        path = out / f"sample_{engine}.jsonl"
        require(path, f"the {engine} sample (countercase lab audit-sample --engine {engine})")
        samples.append([json.loads(line) for line in path.open(encoding="utf-8")])
    seed = load_params(params_path).seed
    merged = blind(samples, seed)
    write_jsonl(out / f"to_label{suffix}.jsonl", merged)
    subsample = sorted(random.Random(seed + 1).sample(range(len(merged)),
                                                      min(second, len(merged))))
    write_jsonl(out / f"to_label{suffix}_second.jsonl", [merged[i] for i in subsample])
    log.info("%d items to label (%d for the second labeller) -> %s", len(merged),
             len(subsample), out)


@lab.command("audit-results")
def audit_results_command(
    folder: Path = typer.Option(layout.LEGAL_AUDIT, help="Folder of the audit's files."),
    out: Optional[Path] = metrics_option("the results"),
) -> None:
    """The legal audit's results from its samples and label files (the perturb stage writes the
    same into metrics/counterfactual.json legal_audit)."""
    writable(out, "results file")
    found = legal_audit(folder)
    if found is None:
        raise UserError(f"{folder}: the samples and labels_A.jsonl are needed (audit-sample, "
                        "audit-blind, then the labels)")
    if out:
        write_json(out, found)
    print(json.dumps({e: {k: found[e][k] for k in ("n", "meaningful_share", "unclear_share")}
                      for e in ENGINES if e in found}))


@lab.command("holdings-fit")
def holdings_fit(
    documents: Path = typer.Option(layout.DOCUMENTS, help="The ingest stage's judgments."),
    gold: Path = typer.Option(layout.HOLDING_GOLD, help="The labelled sample."),
    out: Path = typer.Option(layout.HOLDINGS_CHOICE),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Choose the learned scorer of provisions decided on the labelled sample's development
    half (the test half is scored only by stage holdings)."""
    require(gold, "labelled sample")
    found = fit_choice(documents, gold, load_params(params_path).seed, out)
    print(f"{out}: threshold {found['threshold']}, precise {found['precise']}")


@lab.command("holdings-sample")
def holdings_sample(
    documents: Path = typer.Option(layout.DOCUMENTS, help="The ingest stage's judgments."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Print the labelled sample's judgment ids (params.yaml seed and targets.sample)."""
    params = load_params(params_path)
    texts = {d.doc_id: d.text for d in read_documents(documents)}
    print("\n".join(sample(texts, params.seed, params.targets.sample)))
