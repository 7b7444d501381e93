"""The README's measured numbers, written from the pipeline's outputs.

The README and ``docs/reproducing.md`` (:data:`FILES`) state results only inside blocks between
``<!-- measured:NAME -->`` and ``<!-- /measured:NAME -->``; each block is made here from the files
a ``dvc repro`` writes (``metrics/``, ``configs/``, ``paper/aila2019_track.yaml``, the per-query
tables the paper keeps in ``paper/inputs/``), so no number in them is typed by hand and none can
drift from the run it reports. A block may live in any of the files; each of :data:`BLOCKS` lives
in one of them (a test says so). ``python -m countercase.report.readme`` rewrites the blocks of
every file; ``--check`` rewrites nothing and exits 1 naming each block that differs from what the
outputs say (a test runs it on the committed files).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Callable

import yaml

from countercase.layout import metrics as metrics_path
from countercase.report import calibrate
from countercase.report.outputs import Outputs, p_value, tested
from countercase.report.results import RESULTS
from countercase.report.rebuild import table as rebuild_table
from countercase.report.scaleout_table import scaleout
from countercase.report.stage_times import budgets, markdown as stage_table

V3_SUMMARY = metrics_path("validity_v3")  # the opt-in stage validity_v3's summary

BLOCK = re.compile(r"(<!-- measured:(?P<name>[a-z_]+) -->\n)(?P<body>.*?)"
                   r"(<!-- /measured:(?P=name) -->)", re.DOTALL)


def _served(found: dict) -> dict:
    """The served reranker's scores in a reranker report: float32 since issue 40 (``served``),
    the dynamic-int8 model before it (``onnx_int8``, in the reports kept from earlier builds)."""
    return found["served"] if "served" in found else found["onnx_int8"]


def _f(value: float, digits: int = 4) -> str:
    return f"{value:.{digits}f}"


def _pct(value: float) -> str:
    return f"{value:.0%}"


def _test(significance: dict, reference: str, condition: str) -> str:
    """``condition`` against ``reference`` in an evaluation.json ``significance`` (MAP): Holm
    corrects within each reference's family, so the reference comes first."""
    return tested(significance.get("MAP", {}).get(reference, {}).get(condition))


def _stale_reranker(o: Outputs) -> bool:
    """Whether ``evaluate`` last ran with another reranker than the one ``train_reranker`` last
    wrote (dvc.lock): its scores and the reranker's report then describe two models."""
    lock = o.yaml("dvc.lock") or {}
    stages = lock.get("stages", {})
    def md5(entries, path):
        return next((e.get("md5") for e in entries or [] if e.get("path") == path), None)
    used = md5(stages.get("evaluate", {}).get("deps"), "data/processed/reranker")
    made = md5(stages.get("train_reranker", {}).get("outs"), "data/processed/reranker")
    return bool(used and made and used != made)


# -- the rows of the results table: (what, value, files), or None when the stage has not run --

def _corpus(o: Outputs) -> list[tuple[str, str, str]]:
    ingest, extraction = o.metric("ingest.json"), o.metric("extraction.json")
    if not (ingest and extraction):
        return []
    ex, meta, seg = extraction["extract"], extraction["metadata"], extraction["segmentation"]
    per_source = ingest["documents_per_source"]
    return [
        ("judgments ingested", f"{per_source['aila_text']:,} AILA + {per_source['pdf']} PDFs "
         f"({ingest['pdf_pages']} pages), {ingest['n_failures']} failures; "
         f"{ingest['n_pdf_repaired']} damaged PDFs repaired", "`metrics/ingest.json`"),
        (f"chunks ({extraction['chunking']['chunk_size']} word pieces, overlap "
         f"{extraction['chunking']['chunk_overlap']})",
         f"{ex['n_chunks']:,}; {ex['encoder_truncation']['n_chunks_truncated']} truncated by the "
         f"{ex['encoder_truncation']['max_length']}-piece encoder",
         "`metrics/extraction.json` (`extract`)"),
        ("statute table", f"{ex['n_statute_sections']:,} provisions of "
         f"{len(ex['statute_sections_per_act'])} acts", "idem"),
        (f"metadata vs. the gold sample ({meta['n_gold']} judgments)",
         f"date {_f(meta['date']['accuracy'], 2)}, outcome {_f(meta['outcome']['accuracy'], 2)}, "
         f"act sections P {_f(meta['act_sections']['precision'], 2)} / R "
         f"{_f(meta['act_sections']['recall'], 2)} (exact set "
         f"{_f(meta['act_sections']['exact_set_accuracy'], 2)}), judges named in the text P "
         f"{_f(meta['judges_text_only']['precision'], 2)} / R "
         f"{_f(meta['judges_text_only']['recall'], 2)}",
         "`metrics/extraction.json` (`metadata`)"),
        ("segmentation vs. rhetorical roles", "span accuracy BUILD "
         f"{_f(seg['ablation']['final']['build'], 2)}, Paheli "
         f"{_f(seg['ablation']['final']['paheli'], 2)} (the plan's rule alone: "
         f"{_f(seg['baseline']['build']['accuracy'], 2)} / "
         f"{_f(seg['baseline']['paheli']['accuracy'], 2)})",
         "`metrics/extraction.json` (`segmentation`)"),
    ]


def _aila(o: Outputs) -> list[tuple[str, str, str]]:
    retrieval, evaluation = o.both("retrieval"), o.both("evaluation")
    track = o.yaml("paper/aila2019_track.yaml")
    if not (retrieval and evaluation and track):
        return []
    rows = []
    for task, what in (("task1", "precedents"), ("task2", "statutes")):
        scores = retrieval[f"aila2019-{task}"]
        tests = evaluation[f"aila2019-{task}"]["significance"]
        full, best = scores["full"], track[task]
        # BPREF left out: AILA's qrels judge no document non-relevant (the paper says why)
        measures = [m for m in ("MAP", "P@10", "RR") if m in full]
        beside = [f"`{c}` {_f(scores[c]['MAP'])} ({_test(tests, 'full', c)})"
                  for c in ("ltr", "no_rerank", "bm25_docs", "full_aila_tuned") if c in scores]
        rows.append((f"Task {task[-1]} ({what}), AILA_Q11..Q50, `full`",
                     ", ".join(f"{m} {_f(full[m])}" for m in measures)
                     + f" (the track's best run: {', '.join(str(best[m]) for m in measures)}); "
                     + "; ".join(beside) + (_audited(o) if task == "task2" else "")
                     + ("; *scored with an earlier reranker than the one described below "
                        "(`evaluate` has not run since `train_reranker`)*"
                        if _stale_reranker(o) else ""),
                     "`metrics/retrieval.json`, `metrics/evaluation.json`"
                     + (", `metrics/leakage.json`" if task == "task2" else "")))
    return rows


def _audited(o: Outputs) -> str:
    """The statute task's leakage audit beside its headline (stage leakage)."""
    audit = o.metric("leakage.json")
    if not audit:
        return ""
    bar = audit["drop"]["threshold"]
    kept = audit["thresholds"][str(bar)]["MAP"]
    copies = audit["without_copy_queries"]
    return ("; **audited for near-copies**: with every judgment holding "
            f"at least {_pct(bar)} of a query's word 8-shingles kept from the statute bridge, "
            + ", ".join(f"`{n}` {_f(kept[n])} ({0.0 - audit['drop']['MAP'][n]:+.4f})"
                        for n in kept)
            + f"; without {', '.join(copies['queries_left_out'])}: "
            + ", ".join(f"`{n}` {_f(v)}" for n, v in copies["MAP"].items()))


def _citations(o: Outputs) -> list[tuple[str, str, str]]:
    retrieval, evaluation, tuning = (o.both("retrieval"), o.both("evaluation"),
                                     o.metric("tuning.json"))
    collection = o.metric("citations.json")
    if not (retrieval and evaluation and tuning and collection):
        return []
    best = {name: grid["best"] for name, grid in tuning["precedents"].items()}
    held, tests = retrieval["citations"], evaluation["citations"]["significance"]
    task1, aila_tests = retrieval["aila2019-task1"], evaluation["aila2019-task1"]["significance"]
    choice = o.yaml("configs/tuning_choice.yaml") or {}
    ft_choice = o.yaml("configs/tuning_ft_choice.yaml") or {}
    tuned = (ft_choice.get("tuned_system_ft") if ft_choice.get("adopt")
             else choice.get("tuned_system", "full"))
    levers = [c for c in ("bm25_docs", "full_docs", "full_docs_prior", "tuned_ft") if c in held]
    return [(
        f"citation collection ({collection['queries']['tuning']} tuning and "
        f"{collection['queries']['heldout']} held-out masked corpus judgments citing earlier ones)",
        f"tuning half MAP: pipeline {_f(best['pipeline']['tuning_MAP'], 3)}, passages pooled by "
        f"{best['passages_bm25']['pool']} (k1 {best['passages_bm25']['k1']}, b "
        f"{best['passages_bm25']['b']}) {_f(best['passages_bm25']['tuning_MAP'], 3)}, "
        "judgment-level BM25 "
        f"(k1 {best['docs']['k1']}, b {best['docs']['b']}) {_f(best['docs']['tuning_MAP'], 3)}, "
        f"fused with the pipeline {_f(best['docs_fusion']['tuning_MAP'], 3)}, with the citation "
        f"prior {_f(best['prior']['tuning_MAP'], 3)}. Held-out half: `full` "
        f"{_f(held['full']['MAP'])}; "
        + "; ".join(f"`{c}` {_f(held[c]['MAP'])} ({_test(tests, 'full', c)})" for c in levers)
        + f". The tuned system by the rules of `configs/tuning_choice.yaml` and "
        f"`configs/tuning_ft_choice.yaml`: `{tuned}`. The same "
        f"levers on AILA_Q11..Q50 Task 1 against `full` {_f(task1['full']['MAP'])}: "
        + "; ".join(f"`{c}` {_f(task1[c]['MAP'])} ({_test(aila_tests, 'full', c)})"
                    for c in levers if c in task1),
        "`metrics/tuning.json`, `configs/tuning_choice.yaml`, `metrics/retrieval.json`")]


def _ltr(o: Outputs) -> list[tuple[str, str, str]]:
    """The learned rankers: their dev numbers, the rule's serving choice, and their scores on
    the held-out half and AILA Task 1 with the declared families' tests."""
    found, retrieval, evaluation = o.metric("ltr.json"), o.both("retrieval"), o.both("evaluation")
    choice = o.yaml("configs/ltr_choice.yaml") or {}
    if not (found and retrieval and "ltr" in retrieval.get("citations", {})):
        return []
    models = found["models"]

    def scored(collection: str) -> str:
        scores = retrieval[collection]
        families = evaluation[collection].get("families", {})
        tests = {name: t for fam in families.values() for name, t in fam["tests"].items()}
        def versus(name: str, against: str) -> str:
            test = tests.get(f"{name} vs {against}")
            return f" (against `{against}` Holm p {test['p_holm']:.3g})" if test else ""
        return "; ".join(
            f"`{name}` {_f(scores[name]['MAP'])}"
            + "".join(versus(name, against) for against in ("full", "full_docs_prior", "ltr",
                                                              "ltr_unmasked"))
            for name in models if name in scores)
    return [(
        "learned ranker (LightGBM lambdarank over text, citation and fact-sheet features; "
        "`configs/ltr_rule.yaml`)",
        f"dev out-of-fold MAP ({found['dev_queries']} queries of the tuning half): "
        + ", ".join(f"`{n}` {_f(m['out_of_fold_MAP'])}" for n, m in models.items())
        + f"; `{found['served']['system']}` {_f(found['served']['MAP'])} on the same "
        f"queries: the rule {'serves' if choice.get('serve') else 'does not serve'} `ltr`, so "
        f"the trees search {'`ltr_unmasked`' if choice.get('serve') else 'the pipeline'}. "
        f"Held-out half: {scored('citations')}. AILA_Q11..Q50 Task 1: "
        f"{scored('aila2019-task1')}" + _shap_by_kind(models),
        "`metrics/ltr.json`, `configs/ltr_choice.yaml`, `metrics/retrieval.json`, "
        "`metrics/evaluation.json` (`families`)")]


def _shap_by_kind(models: dict) -> str:
    """The citation prior's and year gap's SHAP share on the dev queries and on AILA's case
    descriptions, per learned system that has both."""
    shares = [(name, *(sum(m[key].get(f, 0.0) for f in ("prior", "year_gap"))
                       for key in ("importance_shap", "importance_shap_descriptions")))
              for name, m in models.items()
              if "importance_shap_descriptions" in m and "prior" in m["importance_shap"]]
    if not shares:
        return ""
    return (". SHAP share of the citation prior and year gap, dev queries -> AILA_Q1..Q10: "
            + ", ".join(f"`{n}` {a:.2f} -> {b:.2f}" for n, a, b in shares))


def _serving(o: Outputs) -> list[tuple[str, str, str]]:
    """The served system: the route per kind of query, its tuning scores and its test scores
    against chunk BM25."""
    choice, retrieval = o.yaml("configs/serving_choice.yaml"), o.both("retrieval")
    if not choice or not retrieval:
        return []
    kinds = "; ".join(
        f"{kind} -> `{found['system']}` (tuning MAP "
        f"{_f(found['candidates'][found['system']]['MAP'])} on {found['queries']} queries, "
        "chunk BM25 "
        f"{_f(found['candidates'][choice['baseline']]['MAP'])})"
        for kind, found in choice["kinds"].items())
    tested = "; ".join(
        f"{name}: `{scores['served']['system']}` {_f(scores['served']['MAP'])} against chunk BM25 "
        f"{_f(scores['bm25']['MAP'])}" for name, scores in retrieval.items()
        if "served" in scores and "bm25" in scores)
    return [("served system (the route per kind of query; `configs/serving_rule.yaml`)",
             f"{kinds}. Test: {tested or 'not scored yet'}",
             "`configs/serving_choice.yaml`, `metrics/retrieval.json` (`served`)")]


def _latency(o: Outputs) -> list[tuple[str, str, str]]:
    latency = o.metric("latency.json")
    if not latency:
        return []
    ms = {name: c["stages_ms"]["total"] for name, c in latency["conditions"].items()}
    rerank = ms.get("precedents_rerank_top20")
    warm = ms.get("precedents_rerank_top20_warm_cache")
    return [(f"retrieval latency, {latency['n_queries']} AILA queries",
             f"precedents p50 {ms['precedents']['p50']:.0f} ms / p95 {ms['precedents']['p95']:.0f} "
             f"ms; statutes p50 {ms['statutes']['p50']:.0f} ms"
             + (f"; with the domain reranker on the top 20 p50 {rerank['p50'] / 1000:.2f} s"
                if rerank else "")
             + (f", {warm['p50']:.0f} ms on a repeated query (answers cached)" if warm else "")
             + "".join(f"; served, {name[7:]} route (`{c.get('system', name[7:])}`) p50 "
                       f"{c['stages_ms']['total']['p50']:.0f} ms / p95 "
                       f"{c['stages_ms']['total']['p95']:.0f} ms (one query at a time)"
                       for name, c in latency["conditions"].items()
                       if name.startswith("served_")),
             "`metrics/latency.json`")]


def _facts(o: Outputs) -> list[tuple[str, str, str]]:
    sheets, ner = o.metric("factsheets.json"), o.metric("ner.json")
    if not sheets:
        return []
    rules, rows = sheets["rules"]["judgments"], []
    rows.append((f"rule fact sheets, {rules['n']:,} judgments",
                 f"sections in {_pct(rules['with_sections'])} of the judgments' facts, evidence "
                 f"items in {_pct(rules['with_evidence'])}, amounts {_pct(rules['with_amounts'])}, "
                 f"ages {_pct(rules['with_ages'])}", "`metrics/factsheets.json`"))
    llm = sheets.get("llm", {})
    if llm.get("status") == "run":
        rows.append((f"LLM fact sheets ({llm['n']} cases)",
                     f"valid JSON {_pct(llm['valid_first_try'])} on the first try, "
                     f"{_pct(llm['valid_after_retry'])} after a retry; {llm['ungrounded_values']} "
                     f"values not found in the text dropped; {llm['seconds_per_case']} s a case "
                     "in the run that wrote it (answers are recorded: a replayed rerun takes "
                     "about 0)",
                     "`metrics/factsheets.json` (`llm`)"))
    replay = o.metric("llm_replay.json")
    if replay and replay["sample"]:
        recorded = ", ".join(f"{n} {stage}" for stage, n in replay["entries"].items())
        rows.append(("the LLM's recorded answers, re-asked (stage llm_replay)",
                     f"{replay['matches']} of {replay['sample']} recorded prompts (seed "
                     f"{replay['seed']}; recorded: {recorded}) gave the same answer again; "
                     "the installed model is "
                     + ("the expected one" if replay["model_is_expected"]
                        else "not the expected one"),
                     "`metrics/llm_replay.json`"))
    if ner:
        dev = ner["dev"]
        rows.append(("legal entity tagger (MiniLM-L6 on InLegalNER, dev set)",
                     "strict F1 " + ", ".join(f"{label} {_f(dev[label]['f1'], 3)}" for label in
                                              ("PROVISION", "STATUTE", "PETITIONER", "RESPONDENT"))
                     + f", micro {_f(dev['micro']['f1'], 3)}", "`metrics/ner.json`"))
    entities = sheets.get("entities")
    if entities:
        per_label = entities["per_label"]
        rows.append((f"entity tags ({entities['n_queries']} queries + {entities['n_judgments']} "
                     "judgments' facts)",
                     ", ".join(f"{n:,} {label}" for label, n in
                               sorted(per_label.items(), key=lambda kv: -kv[1]))
                     + f" ({entities['ner_agreeing_with_rules']['LEGAL_SECTION']} LEGAL_SECTION "
                     "tags agreeing with the section rules)",
                     "`metrics/factsheets.json` (`entities`)"))
    return rows


def _learned(o: Outputs) -> list[tuple[str, str, str]]:
    rows = []
    reranker, params = o.metric("reranker.json"), o.yaml("params.yaml")
    choice = o.yaml("configs/reranker_choice.yaml")  # the stage's decision by its rule
    if reranker and params and choice:
        training, valid = reranker["training"], reranker["validation"]
        w = valid["best_first_stage_weight"]
        rows.append((
            "domain reranker (citation-trained MiniLM-L6 cross-encoder, "
            f"{params['reranker']['max_length']} word pieces)",
            f"{reranker['mined']['cited_pairs_resolved']:,} citing-cited pairs; "
            f"{reranker['groups_trained_on']:,} groups, {training['steps']} steps (loss "
            f"{training['loss_first_window']} -> {training['loss_last_window']}); checkpoint step "
            f"{training['best']['step']} chosen on the dev queries (MAP "
            f"{_f(training['best']['MAP'])}); served alone {_f(_served(valid)['MAP'])}, "
            f"blended with the first stage at w {w} "
            f"{_f(valid['first_stage_weight'][str(w)]['MAP'])} against `no_rerank` "
            f"{_f(valid['no_rerank']['MAP'])}: the reranker is "
            f"{'on' if choice['use_rerank'] else 'off'} (`configs/reranker_choice.yaml`)"
            + "".join(f"; {name} beside: {_f(_served(found)['MAP'])} against `no_rerank` "
                      f"{_f(found['no_rerank']['MAP'])}"
                      for name, found in _flat(reranker.get("scored_beside", {})).items()),
            "`metrics/reranker.json`"))
    biencoder, ft = o.metric("biencoder.json"), o.metric("tuning_ft.json")
    retrieval = o.both("retrieval") or {}
    encoders = ("dense", "dense_ft", "hybrid_rrf", "hybrid_ft")
    moved = [f"{name}: " + ", ".join(f"`{c}` {_f(scores[c]['MAP'])}" for c in encoders
                                     if c in scores)
             for name, scores in retrieval.items() if "dense_ft" in scores]
    if biencoder:
        rows.append((
            f"dense encoder fine-tuned on citation pairs ({biencoder['pairs']['train']} pairs of "
            f"{biencoder['queries']['train']} tuning queries, "
            f"{biencoder['training']['steps']} steps)",
            f"dev MAP {_f(biencoder['dev_MAP']['untrained'], 3)} as packaged -> "
            f"{_f(biencoder['dev_MAP']['chosen'], 3)}"
            + (f"; its weight in the configured pipeline, chosen on the {ft['dev_queries']} dev "
               f"queries: {ft['weight']}" if ft else "")
            + "".join(f"; {m}" for m in moved),
            "`metrics/biencoder.json`, `metrics/tuning_ft.json`, `metrics/retrieval.json`"))
    llm = o.metric("rerank_llm.json")
    if llm:
        parts = []
        for task, found in llm["tasks"].items():
            scores, test = found["scores"], found["significance"]["MAP"]
            parts.append(f"{task}: MAP {_f(scores['llm']['MAP'])} against "
                         f"{_f(scores['no_rerank']['MAP'])} without it ({tested(test)}), "
                         f"model time {found['cost']['model_seconds_per_query']:.1f} s a query")
        rows.append((f"LLM pointwise reranker (top {llm['depth']}, the first "
                     f"{len(next(iter(llm['tasks'].values()))['queries'])} test queries)",
                     "; ".join(parts),
                     "`metrics/rerank_llm.json`"))
    return rows


def _flat(tree: dict, prefix: str = "") -> dict[str, dict]:
    """The leaves of ``scored_beside`` (collection/task/split) that hold scores, by path."""
    if "no_rerank" in tree:
        return {prefix.rstrip("/"): tree}
    return {k: v for name, sub in tree.items() if isinstance(sub, dict)
            for k, v in _flat(sub, f"{prefix}{name}/").items()}


def _counterfactual(o: Outputs) -> list[tuple[str, str, str]]:
    adjacency, cf = o.metric("adjacency.json"), o.metric("counterfactual.json")
    rows = []
    if adjacency:
        rows.append(("section adjacency map", f"{adjacency['n_edges']:,} edges over "
                     f"{adjacency['n_sections']:,} sections ("
                     + ", ".join(f"{kind.replace('_', ' ')} {n:,}"
                                 for kind, n in adjacency["edges_per_kind"].items()) + ")",
                     "`metrics/adjacency.json`"))
    if not cf:
        return rows
    corpus = cf["corpus_trees"]
    rows.append((f"perturbation trees ({cf['n_trees']} AILA queries)",
                 f"{cf['n_nodes']:,} nodes; mean displacement per edge: "
                 + ", ".join(f"{t} {v:.2f}" for t, v in sorted(
                     cf["sensitivity_per_fact_type"].items(), key=lambda kv: -kv[1]))
                 + f"; {corpus['n_trees']} corpus-case trees add {corpus['n_nodes']:,} nodes",
                 "`metrics/counterfactual.json`"))
    audit = cf.get("legal_audit")
    if audit:
        final = audit[audit["final"]]
        rows.append(("legal audit of root perturbations (read blind, two model labellers)",
                     f"meaningful {audit['before']['meaningful_share']:.2f} before the scoped "
                     f"rules (n {audit['before']['n']}), {final['meaningful_share']:.2f} with "
                     f"them (n {final['n']}, fresh cases): "
                     + ", ".join(f"{t} {x['meaningful_share']:.2f}"
                                 for t, x in final["per_type"].items() if x["n"])
                     + f"; Cohen's kappa {audit['agreement']['cohen_kappa']:.2f}",
                     "`metrics/counterfactual.json` (`legal_audit`)"))
    v = cf["validity"]
    primary, field = v["by_condition"][v["primary"]], v["by_condition"].get("field/tuned")
    rows.append((f"counterfactual validity ({v['n_cases']} corpus cases with operative and "
                 "placebo edges)",
                 f"primary ({v['primary']}): operative {primary['operative_mean_paired']:.2f} "
                 f"against placebo {primary['placebo_mean_paired']:.2f} ranks (cases with both), "
                 f"ratio {primary['ratio']:.2f}, "
                 f"Wilcoxon p {p_value(primary['p_value'])}"
                 + (f"; field granularity {field['ratio']:.2f} (p {p_value(field['p_value'])})"
                    if field else "")
                 + f"; gold dispositive facts ({v['gold']['n_cases']} judgments): Spearman "
                 f"{v['gold']['spearman']:.2f} (95% CI {v['gold']['ci95'][0]:.2f} to "
                 f"{v['gold']['ci95'][1]:.2f})", "`metrics/counterfactual.json` (`validity`)"))
    return rows


def _toward(moved: dict | None) -> str:
    """Whether the trees' top K moved toward each edge's citation targets."""
    if not moved:
        return ""
    return (f"; of {moved['edges']:,} edges, {moved['with_targets']:,} have citation targets, "
            f"and the top K moved toward them on {moved['toward']:,}, away on {moved['away']:,}, "
            f"neither on {moved['neither']:,}")


def _explained(o: Outputs) -> list[tuple[str, str, str]]:
    check, explained, topology = (o.metric("llm_check.json"), o.metric("explanations.json"),
                                  o.metric("topology.json"))
    rows = []
    if check:
        low, high = check["acceptance_ci95"]
        cal = check.get("calibration") or {}
        test = cal.get("test")
        rows.append(("LLM check of root perturbations", f"accepts {check['acceptance_rate']:.3f} "
                     f"(95% CI {low:.2f} to {high:.2f})" + (
                         f"; as a classifier of the legal audit's label, test AUC {test['auc']:.2f}"
                         f" (95% CI {test['auc_ci95'][0]:.2f} to {test['auc_ci95'][1]:.2f}, "
                         f"{cal['counts']['test']['meaningful']} meaningful against "
                         f"{cal['counts']['test']['not_or_unclear']} not): "
                         + ("retired as a filter" if cal["retired"] else "kept as a filter")
                         if test else ""), "`metrics/llm_check.json`"))
    if explained:
        rows.append((f"explanations ({explained['trees']} trees, {explained['nodes']:,} nodes)",
                     f"{explained['sentences']:,} sentences ({explained['claims']:,} claims), each "
                     "re-verified against its sources (a consistency check): "
                     f"{explained['faithfulness']}"
                     + (f"; {explained['per_template'].get('held_facts', 0):,} name the holding a "
                        "result shares, quoting it" if "held_facts" in explained["per_template"]
                        else "") + _toward(explained.get("targets")),
                     "`metrics/explanations.json`"))
    if topology:
        r = {k: topology[f"robustness_vs_{k}"] for k in ("indegree", "constitutional", "bench")}
        rows.append(("precedent robustness across trees",
                     f"{topology['precedents']['n']} root precedents keep their place in "
                     f"{topology['precedents']['mean_robustness']:.2f} of a tree's nodes; Spearman "
                     "against " + ", ".join(
                         f"{k} {x['spearman']:.2f} ({x['ci'][0]:.2f} to {x['ci'][1]:.2f}, "
                         f"n {x['n']})" for k, x in r.items()), "`metrics/topology.json`"))
    explorer = o.metric("timing/explorer.json")
    if explorer:
        edit = explorer["edit_to_redraw_seconds"]
        rows.append(("explorer: an edit to the redrawn page", f"p50 {edit['p50']:.2f} s, p95 "
                     f"{edit['p95']:.2f} s over {edit['n']} edits (target "
                     f"{explorer['target_seconds']} s)", "`metrics/timing/explorer.json`"))
    return rows


def _machine(o: Outputs) -> list[tuple[str, str, str]]:
    rows = []
    embed = o.metric("timing/embed.json")
    if embed:
        cpu = embed.get("cpu", {})
        rows.append((f"dense embeddings, MiniLM {embed['precision']}",
                     f"{embed['precedents_seconds'] / 60:.0f} min at "
                     f"{embed['precedents_passages_per_second']} passages/s"
                     + (f" ({cpu['model']}, {cpu['capability']}, native bfloat16: "
                        f"{'yes' if cpu['native_bf16'] else 'no'})" if cpu else ""),
                     "`metrics/timing/embed.json`"))
    encoder = o.metric("timing/encoder.json")
    if encoder:
        ways = encoder["precisions"]
        rows.append((f"the encoder's precisions ({encoder['n_chunks']} chunks, "
                     f"{encoder['threads']} threads)",
                     "passages/s " + ", ".join(f"{w} {x['passages_per_second']}"
                                               for w, x in ways.items())
                     + "; cosine to float32 " + ", ".join(
                         f"{w} {x['cosine_to_float32_mean']}" for w, x in ways.items()
                         if w != "float32"),
                     "`metrics/timing/encoder.json`"))
    inputs = o.metric("timing/inputs.json")
    if inputs:
        big = 4 * inputs["n"]
        rows.append((f"hostile inputs (`python benchmarks/inputs.py`, each case at "
                     f"{inputs['n']:,} and {big:,})",
                     "; ".join(f"{case.replace('_', ' ')} {c[f'seconds_{big}']} s and "
                               f"{c[f'peak_mb_{big}']} MB ({c['growth']}x its time at "
                               f"{inputs['n']:,})" for case, c in inputs["cases"].items()),
                     "`metrics/timing/inputs.json`"))
    threads = o.metric("timing/threads.json")
    if threads:
        step = threads["seconds_per_step"]
        rows.append((f"a MiniLM-sized training step, {threads['threads']} threads "
                     "(`python -m countercase.runtime.threads`)",
                     f"quiet {step['default_quiet']} s with libgomp's default, "
                     f"{step['passive_quiet']} s with `OMP_WAIT_POLICY=PASSIVE` (the package's "
                     f"default); beside {threads['busy_processes']} busy processes "
                     f"{step['default_busy']} s against {step['passive_busy']} s",
                     "`metrics/timing/threads.json`"))
    return rows


SECTIONS: tuple[Callable[[Outputs], list[tuple[str, str, str]]], ...] = (
    _corpus, _aila, _citations, _ltr, _serving, _latency, _facts, _learned, _counterfactual, _explained,
    _machine)


def results(o: Outputs) -> str:
    rows = [row for section in SECTIONS for row in section(o)]
    if not rows:
        return "*no stage has written its metrics yet: `dvc repro`*\n"
    return ("| what | value | file |\n|---|---|---|\n"
            + "\n".join(f"| {what} | {value} | {where} |" for what, value, where in rows) + "\n")


def stage_times(o: Outputs) -> str:
    table = o.metric("timing/summary.json")
    return stage_table(table, budgets()) + "\n" if table else "*no stage has run yet*\n"


def cpu_classes(o: Outputs) -> str:
    pipeline, timed = o.yaml("dvc.yaml"), o.json(str(calibrate.STAGES_BY_CPU))
    if not pipeline or not timed:
        return f"*missing: {calibrate.STAGES_BY_CPU} (no stage has run yet)*\n"
    return calibrate.class_table(o.json(str(calibrate.CALIBRATION)) or {}, timed,
                                 list(pipeline["stages"]))


def rebuild(o: Outputs) -> str:
    try:
        return rebuild_table(o.root) + "\n"
    except FileNotFoundError as missing:  # named relative to the repository, on any machine
        what = (f"missing: {os.path.relpath(missing.filename, o.root)}" if missing.filename
                else str(missing))
        return f"*{what}*\n"


def _with_ci(value: float, ci: list[float] | None) -> str:
    return f"{_f(value)} [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else _f(value)


def headline(o: Outputs) -> str:
    """The README's first table, formatted from the results table (``metrics/results.json``,
    :mod:`countercase.report.results`): per collection the served system's MAP against chunk
    BM25 and the AILA 2019 track's best run, and in one row the counterfactual answer, from the
    v3 test's own summary (``metrics/validity_v3.json``)."""
    found = o.json(str(RESULTS))
    if not found:
        return (f"*the results table `{RESULTS}` is missing: stage `results` writes it "
                "(`countercase results`)*\n")
    rows, notes = [], []
    for name, c in found["collections"].items():
        by = {row["system"]: row for row in c["rows"]}
        if c["served"] not in by or "bm25" not in by:
            notes.append(f"*{name}: the served system or chunk BM25 not scored*")
            continue
        served, bm25, n, best = by[c["served"]], by["bm25"], c["n_test_queries"], c["track"]
        rows.append(f"| {c['question']}{f' ({n} queries)' if n else ''} | "
                    f"`{c['served_system']}` | {_with_ci(served['MAP'], served['MAP_ci'])} | "
                    f"{_with_ci(bm25['MAP'], bm25['MAP_ci'])} | "
                    + (f"{best['MAP']} (`{best['run']}`)" if best else "-") + " |")
    # the v3 test's own summary: its stage runs after the results stage (opt-in pipeline), so
    # the table's copy of the answer would be the previous build's
    v3 = o.json(str(V3_SUMMARY))
    if v3 and "trees" in v3.get("by_ranker", {}):
        trees, bm25 = v3["by_ranker"]["trees"], v3["by_ranker"].get("bm25")
        def excess(r: dict) -> str:
            return f"excess {r['excess_mean']:+.4f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]"
        settings = {k: v3.get("settings", {}).get(k) for k in ("alpha", "placebo_ratio")}
        target = (f" (p < {settings['alpha']}, placebo ratio >= {settings['placebo_ratio']:g})"
                  if None not in settings.values() else "")
        rows.append(
            "| counterfactual: does editing one fact move the precedents courts cite for the new "
            f"fact? (preregistered, {v3['n_cases']} held-out cases; excess log-rank over a matched "
            f"placebo) | the trees' `{v3['trees_search']}` | {excess(trees)}, Wilcoxon p "
            f"{p_value(trees['p']) if trees['p'] > 0 else '< 1e-6'}, placebo ratio "  # 6 decimals
            f"{trees['placebo_ratio']:.2f}; the target{target} "
            f"{'met' if v3['target_met'] else 'not met'} | "
            + (excess(bm25) if bm25 else "-") + " | - |")
    else:
        notes.append(f"*counterfactual test not run yet: `{V3_SUMMARY}` is missing "
                     "(stage `validity_v3`, `make repro-extended`)*")
    if not rows:  # the notes, in one line
        return "*" + "; ".join(note.strip("*") for note in notes) + "*\n"
    return ("| question (test queries) | served system | MAP [95% CI] | chunk BM25 | "
            "AILA 2019 track's best run |\n|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
            + "".join(f"\n{note}\n" for note in notes))


BLOCKS: dict[str, Callable[[Outputs], str]] = {"headline": headline, "results": results,
                                               "stage_times": stage_times, "rebuild": rebuild,
                                               "scaleout": scaleout, "cpu_classes": cpu_classes}
# the files the blocks live in, from the repository's root; the README first, the others read
# where they exist
FILES: tuple[str, ...] = ("README.md", "docs/reproducing.md")


def render(text: str, o: Outputs) -> str:
    """``text`` (the README or another of :data:`FILES`) with every measured block made anew
    from ``o``."""
    def fill(match: re.Match) -> str:
        name = match["name"]
        if name not in BLOCKS:
            raise ValueError(f"unknown measured block {name!r} (known: {', '.join(BLOCKS)})")
        return match[1] + BLOCKS[name](o) + match[4]
    return BLOCK.sub(fill, text)


def blocks(text: str) -> list[str]:
    """The names of the measured blocks of ``text``, in order."""
    return [m["name"] for m in BLOCK.finditer(text)]


def stale(text: str, o: Outputs) -> list[str]:
    """The names of the blocks of ``text`` that differ from what ``o`` says."""
    fresh = {m["name"]: m["body"] for m in BLOCK.finditer(render(text, o))}
    return [m["name"] for m in BLOCK.finditer(text) if fresh[m["name"]] != m["body"]]


def files(root: Path) -> list[Path]:
    """The files of :data:`FILES` under ``root`` that hold blocks: the README always (a missing
    one is an error), the others where they exist."""
    return [root / name for i, name in enumerate(FILES) if i == 0 or (root / name).is_file()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path("."), help="The repository.")
    parser.add_argument("--check", action="store_true",
                        help="Rewrite nothing; exit 1 if a block differs from the outputs.")
    args = parser.parse_args(argv)
    outputs, status = Outputs(args.root), 0
    for path in files(args.root):
        try:
            text = path.read_text(encoding="utf-8")
            if args.check:
                names = stale(text, outputs)
                if names:
                    print(f"{path}: block(s) {', '.join(names)} differ from the outputs: run "
                          "`python -m countercase.report.readme`", file=sys.stderr)
                    status = 1
                continue
            path.write_text(render(text, outputs), encoding="utf-8")
        except (OSError, ValueError, KeyError, yaml.YAMLError) as error:
            print(f"error: {path}: {type(error).__name__}: {error}", file=sys.stderr)
            return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
