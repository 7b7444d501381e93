"""The scale-out benchmark's tables (``metrics/scaleout.json``, ``python -m
countercase.scaleout.bench``), as ``docs/reproducing.md`` and the paper's appendix print them."""

from __future__ import annotations

from countercase.report.outputs import Outputs


def _plural(n: int, word: str) -> str:
    return word if n == 1 else f"{word}s"


def scaleout(o: Outputs) -> str:
    """The sharded dataflow on 1 and 2 workers, the dense index at corpus scale and the
    capacity plan (``python -m countercase.scaleout.bench``)."""
    scale = o.metric("scaleout.json")
    if not scale:
        return "*not measured yet: `python -m countercase.scaleout.bench`*\n"
    one, two, by_phase = scale["workers_1"], scale["workers_2"], scale["speedup_2_workers_by_phase"]
    phases = [
        (f"judgments: extract, fact sheets, chunking (AILA, {one['aila_judgments']:,})",
         f"{one['aila_judgments_per_second']} /s", f"{two['aila_judgments_per_second']} /s",
         by_phase["judgments_aila"]),
        (f"PDFs read, extracted, chunked ({one['pdf_documents']} real PDFs, "
         f"{one['pdf_pages']} pages)", f"{one['pdf_pages_per_second']} pages/s",
         f"{two['pdf_pages_per_second']} pages/s", by_phase["judgments_pdfs"]),
        (f"embedding (first {one['embed_chunks']:,} chunks)", f"{one['passages_per_second']} /s",
         f"{two['passages_per_second']} /s", by_phase["embedding"]),
        ("the whole dataflow (sum of the phases)", f"{one['total_seconds']:.0f} s",
         f"{two['total_seconds']:.0f} s", f"**{scale['speedup_2_workers']}** (ideal 2)")]
    dense, plan = scale["dense_index"], scale["capacity"]
    at_scale = dense["at_corpus_scale"]
    hours = "; ".join(f"{n} {_plural(int(n), 'worker')}: {h['total_hours']} h (PDFs and extract "
                      f"{h['pdf_reading_and_extract']} h, embedding {h['embedding']} h)"
                      for n, h in plan["hours_by_workers"].items())
    return (
        "| phase | 1 worker | 2 workers | speed-up |\n"
        "|--------------------------------|----------:|----------:|----------:|\n"
        + "".join(f"| {what} | {a} | {b} | {x} |\n" for what, a, b, x in phases)
        + f"\nThe dense index at corpus scale (the stored {dense['vectors']:,} embeddings, the "
        f"{dense['queries']} AILA queries, {dense['threads']} "
        f"{_plural(dense['threads'], 'thread')}):\n\n"
        "| index | recall@100 vs exact | p50 ms/query | memory MB | build s |\n"
        "|---|---:|---:|---:|---:|\n"
        + "".join(f"| {i['index']} | {i['recall_at_100']} | {i['latency_ms_p50']} | "
                  f"{i['memory_mb']} | {i.get('build_seconds', '-')} |\n" for i in dense["indexes"])
        + f"\nBy the rule written before the measurement (exact search while its latency "
        f"projected to the whole corpus stays under {at_scale['budget_ms']:.0f} ms, else the "
        f"fastest index with recall@100 of at least {at_scale['min_recall']}): exact search "
        f"projects to {at_scale['projected_exact_ms_p50']} ms a query at {plan['chunks']:,} "
        f"chunks, so the choice is **{at_scale['chosen']}**.\n\n"
        f"**Capacity plan for the open dataset** ({plan['judgments']:,} judgments; "
        f"{plan['pages_per_judgment']} pages a judgment as in the real PDFs, "
        f"{plan['chunks_per_judgment']} chunks as in AILA's judgments), from the 1-worker costs "
        f"and the measured 2-worker efficiency ({plan['parallel_efficiency']}), assumed to hold "
        f"on more workers (only 2 cores could be measured here): {hours}. The bottleneck is "
        f"{plan['bottleneck'].replace('_', ' ')}. Beside the PDFs: about "
        f"{plan['chunk_table_gb']} GB of chunk table and {plan['vectors_gb']} GB of vectors "
        "(also the memory of the exact index).\n")
