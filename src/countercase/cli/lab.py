"""``countercase lab``: the tools that drew, blinded and scored the labelled samples and the
confirmatory experiments' case lists (the legal audits, the LLM check's calibration, the number
roles, the holding profiles' sample and scorer, the validity cases). They made the files of
``data/gold/`` and the preregistrations' lists; a user of the package never needs them, so they
live here, apart from the product's commands and the pipeline's stages.

The preregistrations name two of them by their old top-level names (``countercase
validity-cases``, ``countercase validity-v3-cases``); those still run, hidden from ``--help``.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Optional

import typer

from countercase import layout
from countercase.cli.base import (CHUNKS_OPTION, CITATIONS_OPTION, INDEX_DIR_OPTION,
                                  METADATA_OPTION, PARAMS_OPTION, UserError, app, require,
                                  writable, write_json)
from countercase.cli.counterfactual import (CASE_DOCUMENTS_OPTION, CASE_SHEETS_OPTION,
                                            EDGES_OPTION, GOLD_OPTION, GROUPS_OPTION,
                                            _case_sets)
from countercase.config import load_params

log = logging.getLogger("countercase")
lab = typer.Typer(no_args_is_help=True, help="The tools that made the labelled samples and the "
                  "confirmatory case lists (data/gold/, docs/preregistration/).")
app.add_typer(lab, name="lab", rich_help_panel="Lab")


@lab.command("audit-sample")
def audit_sample(
    engine: str = typer.Option(..., help="Which engine the rules are: before or after."),
    per_type: int = typer.Option(40, min=1, help="Edges drawn per fact type (all if fewer)."),
    out: Path = typer.Option(layout.LEGAL_AUDIT, help="Folder of the audit's files."),
    edges: Path = EDGES_OPTION,
    documents: Path = CASE_DOCUMENTS_OPTION,
    sheets: Path = CASE_SHEETS_OPTION,
    metadata: Path = METADATA_OPTION,
    groups: Path = GROUPS_OPTION,
    gold: Path = GOLD_OPTION,
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
    import pandas as pd

    from countercase.perturb.audit import ENGINES, draw, root_pool, summary, write_jsonl

    if engine not in ENGINES:
        raise UserError(f"--engine {engine!r}: use one of {', '.join(ENGINES)}")
    params = load_params(params_path)
    sets = _case_sets(params, edges, documents, sheets, metadata, groups, gold, fresh)
    cases = sets.fresh if fresh else sets.validity
    pool = root_pool(cases, pd.read_parquet(edges), params.perturb.per_type, engine)
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
def llm_calibration_sample(
    out: Path = typer.Option(layout.LLM_CALIBRATION, help="Folder of the labelled candidates."),
    audit: Path = typer.Option(layout.LEGAL_AUDIT, help="The legal audit's samples (left out)."),
    edges: Path = EDGES_OPTION,
    documents: Path = CASE_DOCUMENTS_OPTION,
    sheets: Path = CASE_SHEETS_OPTION,
    metadata: Path = METADATA_OPTION,
    groups: Path = GROUPS_OPTION,
    gold: Path = GOLD_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """The LLM check's candidates to label (data/gold/llm_calibration.md): llm_check.calibration
    root candidates of the checked cases that no audit sample holds, by seed, in two halves."""
    import pandas as pd

    from countercase.perturb.audit import root_pool
    from countercase.perturb.calibration import write_sample

    params = load_params(params_path)
    cases = _case_sets(params, edges, documents, sheets, metadata, groups,
                       gold).validity[:params.llm_check.cases]
    pool = root_pool(cases, pd.read_parquet(edges), params.perturb.per_type, "calibration")
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
    from countercase.factsheet.roles import sample_numbers
    from countercase.factsheet.store import read_sheets
    from countercase.ingest.run import read_documents
    from countercase.perturb.audit import write_jsonl

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
    import random

    from countercase.perturb.audit import blind, write_jsonl

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
    out: Optional[Path] = typer.Option(None, help="Write the results here (JSON)."),
) -> None:
    """The legal audit's results from its samples and label files (the perturb stage writes the
    same into metrics/counterfactual.json legal_audit)."""
    from countercase.perturb.audit import ENGINES
    from countercase.perturb.stage import legal_audit

    writable(out, "results file")
    found = legal_audit(folder)
    if found is None:
        raise UserError(f"{folder}: the samples and labels_A.jsonl are needed (audit-sample, "
                        "audit-blind, then the labels)")
    if out:
        write_json(out, found)
    print(json.dumps({e: {k: found[e][k] for k in ("n", "meaningful_share", "unclear_share")}
                      for e in ENGINES if e in found}))


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
    import pandas as pd

    from countercase.confirm.cases import confirmatory_cases
    from countercase.runtime.digests import sha256_files

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
def validity_feasibility(
    tolerance: list[float] = typer.Option([0.1, 0.25, 0.5], help="Tolerances to count at."),
    per_type: Optional[int] = typer.Option(None, min=1, help="Root edits per fact type "
                                           "(default: params.yaml perturb.per_type)."),
    edges: Path = EDGES_OPTION,
    documents: Path = CASE_DOCUMENTS_OPTION,
    sheets: Path = CASE_SHEETS_OPTION,
    metadata: Path = METADATA_OPTION,
    groups: Path = GROUPS_OPTION,
    gold: Path = GOLD_OPTION,
    index_dir: Path = INDEX_DIR_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """How many operative edits of v1's validity cases (development cases) find a matched
    placebo at each tolerance, by fact type: texts and document frequencies only, never a
    ranking (docs/preregistration/validity_v2.md, section 10)."""
    from collections import Counter

    import pandas as pd

    from countercase.confirm.matching import Mass
    from countercase.confirm.pairs import case_pairs, successors
    from countercase.confirm.run import Corpus, Inputs
    from countercase.index.bm25 import Bm25Searcher
    from countercase.retrieve.load import IndexPaths

    bad = [t for t in tolerance if not (math.isfinite(t) and t > 0)]
    if bad:
        raise UserError(f"--tolerance {bad[0]}: give a share of the edit's mass above 0")
    params = load_params(params_path)
    sets = _case_sets(params, edges, documents, sheets, metadata, groups, gold)
    paths = IndexPaths(index_dir, layout.DENSE, layout.CHUNKS, metadata)
    corpus = Corpus(Inputs(paths, documents=documents, sheets=sheets))
    table = pd.read_parquet(edges)
    successor = successors(table)
    found = {}
    with Bm25Searcher(index_dir / "precedents_chunks") as searcher:
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


@lab.command("holdings-fit")
def holdings_fit(
    documents: Path = typer.Option(layout.DOCUMENTS, help="The ingest stage's judgments."),
    gold: Path = typer.Option(layout.HOLDING_GOLD, help="The labelled sample."),
    out: Path = typer.Option(layout.HOLDINGS_CHOICE),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Choose the learned scorer of provisions decided on the labelled sample's development
    half (the test half is scored only by stage holdings)."""
    from countercase.holdings.run import fit_choice

    require(gold, "labelled sample")
    found = fit_choice(documents, gold, load_params(params_path).seed, out)
    print(f"{out}: threshold {found['threshold']}, precise {found['precise']}")


@lab.command("holdings-sample")
def holdings_sample(
    documents: Path = typer.Option(layout.DOCUMENTS, help="The ingest stage's judgments."),
    params_path: Path = PARAMS_OPTION,
) -> None:
    """Print the labelled sample's judgment ids (params.yaml seed and targets.sample)."""
    from countercase.holdings.run import sample
    from countercase.ingest.run import read_documents

    params = load_params(params_path)
    texts = {d.doc_id: d.text for d in read_documents(documents)}
    print("\n".join(sample(texts, params.seed, params.targets.sample)))


@lab.command("validity-v3-cases")
def validity_v3_cases(
    targets: Path = typer.Option(layout.CASE_TARGETS, help="Stage targets' targets.jsonl."),
    citations: Path = CITATIONS_OPTION,
    part: str = typer.Option("heldout", help="The citation collection's part (tuning: a pilot)."),
    out: Optional[Path] = typer.Option(None, help="Write the list here (the preregistration's "
                                       "cases_file)."),
    prereg: Path = typer.Option(layout.VALIDITY_V3, help="Its settings (tolerance, per_type)."),
    index_dir: Path = INDEX_DIR_OPTION,
    chunks: Path = CHUNKS_OPTION,
    metadata: Path = METADATA_OPTION,
    params_path: Path = PARAMS_OPTION,
) -> None:
    """v3's case list: every citation case of PART with an edit whose whole-graph targets are
    not empty, and how many yield a matched pair (texts and document frequencies, no ranking)."""
    import json

    from countercase.confirm.prereg import read_settings
    from countercase.confirm.v3 import SETTINGS, Inputs, eligible, feasibility, read_targets
    from countercase.datasets.citations import read_citations
    from countercase.retrieve.load import IndexPaths

    require(targets, "targets (stage `targets`)")
    ids = eligible(read_targets(targets), read_citations(citations).part, part)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("\n".join(ids) + "\n", encoding="utf-8")
    inputs = Inputs(IndexPaths(index_dir, chunks=chunks, metadata=metadata), citations,
                    targets=targets, prereg=prereg)
    print(json.dumps(feasibility(ids, inputs, load_params(params_path), read_settings(prereg, SETTINGS)),
                     indent=2))


# the names the frozen preregistrations give them
app.command("validity-cases", hidden=True)(validity_cases)
app.command("validity-v3-cases", hidden=True)(validity_v3_cases)
