"""The explorer's panels as HTML, from what :class:`countercase.explore.session.Explorer`
returns: the fact sheet's confidence, the side-by-side diff, the results with their
explanations, the sensitivity chart and the tree's layout. Every text from the data is escaped."""

from __future__ import annotations

from html import escape
from typing import Any

STATUS = {"stable": ("#333333", "stable"),
          "dropped": ("#b00020", "not retrieved after the fact change"),
          "new": ("#1b7f3b", "newly applicable")}
TYPE_COLOURS = {"root": "#555555", "numerical": "#1f77b4", "section": "#9467bd",
                "party": "#ff7f0e", "evidence": "#d62728", "manual": "#2ca02c"}


def message(text: str, kind: str = "error") -> str:
    colour = {"error": "#b00020", "info": "#1f4e79"}[kind]
    return f'<div class="cc-message cc-{kind}" style="color:{colour}">{escape(text)}</div>'


def confidence_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "<p><i>The sheet holds no facts to check.</i></p>"
    body = "".join(_confidence_row(r) for r in rows)
    flagged = sum(r["review"] for r in rows)
    return (f"<p>{flagged} of {len(rows)} values are below high confidence: check them "
            "before building the tree.</p><table class='cc-confidence'><tr><th>field</th>"
            f"<th>value</th><th>found by</th><th>confidence</th><th></th></tr>{body}</table>")


def _confidence_row(row: dict[str, Any]) -> str:
    score = "" if row["score"] is None else f"{row['score']:.2f} "
    flag = "&#9888; review" if row["review"] else ""
    return (f'<tr class="{"cc-review" if row["review"] else ""}"><td>{escape(row["field"])}</td>'
            f'<td>{escape(row["value"])}</td><td>{escape(row["found by"])}</td>'
            f'<td>{score}{escape(row["level"])}</td><td>{flag}</td></tr>')


def side_by_side(diff: dict[str, Any]) -> str:
    if diff["parent"] is None:
        return f"<p>{escape(diff['node'])} is the case itself: it has no parent to compare with.</p>"
    rows = diff["rows"]

    def column(key: str, title: str) -> str:
        ranked = sorted((r for r in rows if r[key] is not None), key=lambda r: r[key])
        gone = [r for r in rows if r[key] is None]
        cells = "".join(_diff_row(r, key) for r in ranked + gone)
        return (f'<div class="cc-col"><h4>{escape(title)}</h4><table><tr><th>rank</th>'
                f"<th>judgment</th><th>status</th><th>ranks</th><th>moved</th></tr>{cells}"
                "</table></div>")

    counts = {s: sum(r["status"] == s for r in rows) for s in STATUS}
    head = (f'<p class="cc-diff-head">{escape(diff["node"])} against its parent '
            f'{escape(diff["parent"])}: <b>{escape(diff["change"])}</b>. {counts["dropped"]} '
            f'dropped, {counts["new"]} new, {counts["stable"]} stable; mean displacement '
            f'{diff["mean_displacement"]:.2f}.</p>' + _grounds(diff))
    return (head + '<div class="cc-diff" style="display:flex;gap:1em">'
            + column("rank_parent", f"parent {diff['parent']}")
            + column("rank_node", f"node {diff['node']}") + "</div>")


def _grounds(diff: dict[str, Any]) -> str:
    """The edge's rule, the scope it matched and its legal source (a manual edit has none)."""
    if not diff.get("rule"):
        return ""
    return (f'<p class="cc-grounds">rule: {escape(diff["rule"])}; scope: '
            f'{escape(diff.get("scope") or "-")}; source: {escape(diff.get("source") or "-")}</p>')


def _diff_row(row: dict[str, Any], key: str) -> str:
    colour, meaning = STATUS[row["status"]]
    rank = row[key] if row[key] is not None else "-"
    ranks = f"{row['rank_parent'] or '-'} &rarr; {row['rank_node'] or '-'}"
    moved = "" if row["displacement"] is None else str(row["displacement"])
    return (f'<tr class="cc-{row["status"]}" data-doc="{escape(row["doc_id"])}" '
            f'style="color:{colour}"><td>{rank}</td><td title="{escape(row["citation"])}">'
            f'{escape(row["doc_id"])} <small>{escape(row["citation"][:80])}</small></td>'
            f'<td>{escape(meaning)}</td><td>{ranks}</td><td>{moved}</td></tr>')


def results(found: list[dict[str, Any]], summary: list[str]) -> str:
    if not found:
        return "<p>No precedent was retrieved at this node.</p>"
    head = ""
    if summary:
        head = ('<div class="cc-summary"><b>Why the results changed:</b> '
                + " ".join(escape(s) for s in summary) + "</div>")
    cards = []
    for r in found:
        where = " &middot; ".join(x for x in (
            escape(r["section_type"] or ""), f"page {r['page']}" if r["page"] else "") if x)
        explanation = "".join(f"<li>{escape(s)}</li>" for s in r["explanation"])
        cards.append(
            f'<div class="cc-result" data-doc="{escape(r["doc_id"])}"><b>{r["rank"]}. '
            f'{escape(r["doc_id"])}</b> {escape(r["citation"])} <small>{where}</small> '
            f'<a href="{escape(r["source"])}" target="_blank">source</a>'
            f'<blockquote>{escape(r["chunk"][:600])}{"&hellip;" if len(r["chunk"]) > 600 else ""}'
            f'</blockquote><details class="cc-explanation"><summary>explanation</summary>'
            f"<ul>{explanation or '<li>no explanation</li>'}</ul></details></div>")
    return head + "".join(cards)


def sensitivity_chart(scores: dict[str, float]) -> str:
    """Mean displacement per fact type as horizontal bars (SVG)."""
    if not scores:
        return "<p>No edge yet: expand a node to measure sensitivity.</p>"
    top = max(max(scores.values()), 1e-9)
    bar_h, width, label_w = 22, 260, 90
    rows = []
    for i, (kind, value) in enumerate(sorted(scores.items(), key=lambda kv: -kv[1])):
        y = i * (bar_h + 6)
        w = width * value / top
        rows.append(
            f'<g class="cc-bar" data-type="{escape(kind)}"><text x="0" y="{y + 15}" '
            f'font-size="12">{escape(kind)}</text><rect x="{label_w}" y="{y}" width="{w:.1f}" '
            f'height="{bar_h}" fill="{TYPE_COLOURS.get(kind, "#777")}"/><text '
            f'x="{label_w + w + 4:.1f}" y="{y + 15}" font-size="12">{value:.2f}</text></g>')
    height = len(scores) * (bar_h + 6)
    return (f'<svg class="cc-sensitivity" width="{label_w + width + 50}" height="{height}" '
            f'role="img" aria-label="mean rank displacement per fact type">{"".join(rows)}</svg>'
            "<p><small>Mean rank displacement of the top results per fact type.</small></p>")


def layout(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``x`` and ``y`` for each node: leaves side by side in depth-first order, a parent above
    the middle of its children, one row per depth."""
    children: dict[str | None, list[str]] = {}
    for n in nodes:
        children.setdefault(n["parent"], []).append(n["id"])
    x: dict[str, float] = {}
    leaves = 0

    def place(node_id: str) -> float:
        nonlocal leaves
        kids = children.get(node_id, [])
        if not kids:
            x[node_id] = float(leaves)
            leaves += 1
        else:
            spots = [place(k) for k in kids]
            x[node_id] = (spots[0] + spots[-1]) / 2
        return x[node_id]

    for root in children.get(None, []):
        place(root)
    return [{**n, "x": x[n["id"]], "y": float(n["depth"]),
             "colour": TYPE_COLOURS.get(n["type"], "#777")} for n in nodes]
