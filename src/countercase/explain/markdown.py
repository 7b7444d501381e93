"""A tree as Markdown: a deterministic projection of its JSON (the query's fact sheet, each node's
results with their explanations, the diff against its parent with the edge's summary, the
sensitivity per fact type, the tree's structure). Nothing is written here that the JSON does not
hold, so the text cannot say more than the grounded explanations do."""

from __future__ import annotations

from typing import Any

from countercase.perturb.tree import TreeModel, TreeNode


def _sheet_rows(node: TreeNode) -> list[str]:
    sheet = node.fact_sheet_state
    facts = sheet.numerical_facts
    rows = [("petitioner", sheet.parties.petitioner.type),
            ("respondent", sheet.parties.respondent.type),
            ("sections", ", ".join(s.section_id for s in sheet.sections_cited)),
            ("evidence", ", ".join(e.evidence_type for e in sheet.evidence_items)),
            ("ages", ", ".join(f"{a.years:g}" for a in facts.ages)),
            ("amounts", ", ".join(f"Rs {a.value:,.0f}" for a in facts.amounts)),
            ("durations", ", ".join(f"{d.value:g} {d.unit}" for d in facts.durations))]
    return ["| field | value |", "|---|---|"] + [f"| {k} | {v or '-'} |" for k, v in rows]


def _sentences(found: list[dict[str, Any]]) -> str:
    return " ".join(s["text"] for s in found)


def _node(node: TreeNode) -> list[str]:
    title = "root" if node.edge is None else node.edge.description
    lines = [f"## {node.node_id} (depth {node.depth}): {title}", ""]
    if node.edge is not None and node.edge.rule:
        lines += [f"Rule: {node.edge.rule}; scope: {node.edge.scope or '-'}; "
                  f"source: {node.edge.basis}.", ""]
    if node.counterfactual_summary:
        lines += [_sentences(node.counterfactual_summary), ""]
    if node.diff_vs_parent is not None:
        d = node.diff_vs_parent
        lines += ["| dropped | new | stable | mean displacement | RBO |", "|---|---|---|---|---|",
                  f"| {', '.join(d.dropped) or '-'} | {', '.join(d.new) or '-'} | "
                  f"{len(d.stable)} | {d.mean_displacement:.2f} | {d.rbo:.3f} |", ""]
    if not node.retrieval_results:
        return lines + ["No precedent was retrieved at this node: there is nothing to explain.",
                        ""]
    lines += ["| rank | judgment | why |", "|---|---|---|"]
    for result in node.retrieval_results:
        key = result.get("chunk_id") or result["doc_id"]
        why = _sentences(node.explanations.get(key, [])) or "-"
        lines.append(f"| {result.get('rank', '')} | {result['doc_id']} | {why} |")
    return lines + [""]


def _structure(tree: TreeModel) -> list[str]:
    """The nodes depth first, each under its parent."""
    children: dict[str | None, list[TreeNode]] = {}
    for node in tree.nodes:
        children.setdefault(node.parent_id, []).append(node)
    lines, stack = [], list(reversed(children.get(None, [])))
    while stack:
        node = stack.pop()
        lines.append(f"{'  ' * node.depth}- {node.node_id}: "
                     f"{node.edge.description if node.edge else 'root'}"
                     + (" (pruned)" if node.pruned else ""))
        stack += reversed(children.get(node.node_id, []))
    return lines


def tree_markdown(tree: TreeModel) -> str:
    root = tree.nodes[0]
    lines = [f"# Perturbation tree of {tree.case_id}", "",
             f"{len(tree.nodes)} nodes; query construction: {tree.query_construction}.", "",
             "## The query's fact sheet", ""] + _sheet_rows(root) + [""]
    if tree.sensitivity_scores:
        lines += ["## Sensitivity per fact type", "", "| fact type | mean displacement |",
                  "|---|---|"] + [f"| {t} | {v:.3f} |" for t, v in
                                 sorted(tree.sensitivity_scores.items())] + [""]
    lines += ["## Structure", ""] + _structure(tree) + [""]
    for note in tree.notes:
        lines += [f"> {note}", ""]
    for node in tree.nodes:
        lines += _node(node)
    return "\n".join(lines).rstrip() + "\n"
