"""The explorer's page (Panel): a case in, its fact sheet reviewed, its perturbation tree drawn
and opened node by node, each node's results and diff explained, edits and exports.

Panel was chosen because the same objects render inside Jupyter (``ExplorerApp(...).view()`` in
a notebook cell) and as a served page, and because it ships its browser code with the package:
nothing is fetched from the network (a requirement here). The page's state lives in
:class:`countercase.explore.session.Explorer`; this module only wires widgets to it. No action
shows a stack trace: a user's mistake is a message in the page, a bug a message pointing to
the server log.
"""

from __future__ import annotations

import io
import logging
from typing import Callable

import panel as pn
import param

from countercase.errors import CountercaseError
from countercase.explore import render
from countercase.explore.session import KINDS, Explorer, Judgments, confidence_rows, form_values
from countercase.explore.sources import source_route
from countercase.factsheet.schema import PARTY_TYPES
from countercase.legal.vocab import OUTCOMES

log = logging.getLogger(__name__)

TITLE = "COUNTERCASE explorer"


class TreeGraph(pn.custom.JSComponent):
    """The tree as an SVG graph; a click on a node sets ``selected``."""

    nodes = param.List(default=[], doc="nodes with x, y, colour (render.layout)")
    selected = param.String(default="")

    _esm = """
    const NS = "http://www.w3.org/2000/svg";
    function svg(tag, attrs) {
      const e = document.createElementNS(NS, tag);
      for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
      return e;
    }
    export function render({ model, el }) {
      const draw = () => {
        el.innerHTML = "";
        const nodes = model.nodes;
        if (!nodes.length) { el.textContent = "No tree yet: load a case and build its tree."; return; }
        const dx = 110, dy = 80, pad = 30;
        const pos = {};
        let w = 0, h = 0;
        for (const n of nodes) {
          pos[n.id] = [pad + n.x * dx, pad + n.y * dy];
          w = Math.max(w, pos[n.id][0]); h = Math.max(h, pos[n.id][1]);
        }
        const root = svg("svg", {width: w + 2 * pad + 40, height: h + 2 * pad, class: "cc-tree"});
        for (const n of nodes) {
          if (n.parent && pos[n.parent]) {
            const [x1, y1] = pos[n.parent], [x2, y2] = pos[n.id];
            root.appendChild(svg("line", {x1, y1, x2, y2, stroke: "#999"}));
          }
        }
        for (const n of nodes) {
          const [x, y] = pos[n.id];
          const g = svg("g", {"data-node": n.id, class: "cc-node", cursor: "pointer"});
          const chosen = n.id === model.selected;
          g.appendChild(svg("circle", {cx: x, cy: y, r: chosen ? 13 : 10, fill: n.colour,
                                       stroke: chosen ? "#000" : "#fff", "stroke-width": 3,
                                       opacity: n.pruned ? 0.45 : 1}));
          const label = svg("text", {x: x + 14, y: y + 4, "font-size": 11});
          label.textContent = n.id;
          g.appendChild(label);
          const title = svg("title", {});
          const moved = n.displacement === null ? "" : ` (mean displacement ${n.displacement.toFixed(2)})`;
          title.textContent = `${n.id}: ${n.label}${moved}${n.pruned ? ", pruned" : ""}`;
          g.appendChild(title);
          g.addEventListener("click", () => { model.selected = n.id; });
          root.appendChild(g);
        }
        const types = [...new Set(nodes.map(n => n.type))];
        types.forEach((t, i) => {  // the legend: what each colour is
          const n = nodes.find(m => m.type === t);
          const y = 12 + i * 14;
          root.appendChild(svg("circle", {cx: w + pad + 8, cy: y, r: 5, fill: n.colour}));
          const label = svg("text", {x: w + pad + 16, y: y + 4, "font-size": 10, class: "cc-legend"});
          label.textContent = t;
          root.appendChild(label);
        });
        root.setAttribute("width", w + 2 * pad + 110);
        root.setAttribute("height", Math.max(h + 2 * pad, 20 + types.length * 14));
        el.appendChild(root);
      };
      draw();
      model.on("nodes", draw);
      model.on("selected", draw);
    }
    """


class ExplorerApp:
    """One browser session: its widgets and the :class:`Explorer` behind them."""

    def __init__(self, explorer: Explorer) -> None:
        self.explorer = explorer
        p = explorer.workspace.params.perturb
        self.kind = pn.widgets.Select(name="Case from", options={v: k for k, v in KINDS.items()},
                                      value="query")
        self.case_id = pn.widgets.TextInput(name="Id", placeholder="AILA_Q30 or C12")
        self.text = pn.widgets.TextAreaInput(name="Text", placeholder="The facts of a case",
                                             height=120)
        self.sheet_file = pn.widgets.FileInput(name="Fact sheet", accept=".json")
        self.load_button = pn.widgets.Button(name="Load case", button_type="primary")
        self.depth = pn.widgets.IntInput(name="Depth", value=1, start=0, end=p.depth)
        self.branching = pn.widgets.IntInput(name="Branching", value=p.branching, start=1, end=10)
        self.build_button = pn.widgets.Button(name="Build tree", button_type="primary")
        self.message = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["cc-messages"])
        self.graph = TreeGraph(sizing_mode="stretch_width", min_height=120)
        self.sensitivity = pn.pane.HTML("")
        self.fields = {
            "petitioner": pn.widgets.Select(name="Petitioner", options=list(PARTY_TYPES)),
            "respondent": pn.widgets.Select(name="Respondent", options=list(PARTY_TYPES)),
            "sections": pn.widgets.TextInput(name="Sections (canonical ids, comma-separated)"),
            "evidence": pn.widgets.TextInput(name="Evidence types"),
            "ages": pn.widgets.TextInput(name="Ages (years)"),
            "amounts": pn.widgets.TextInput(name="Amounts (INR)"),
            "durations": pn.widgets.TextInput(name="Durations (e.g. 7 years)"),
            "outcome": pn.widgets.Select(name="Outcome", options=list(OUTCOMES))}
        self.description = pn.widgets.TextInput(name="Describe the edit (optional)")
        self.correct_button = pn.widgets.Button(name="Correct the case's sheet")
        self.edit_button = pn.widgets.Button(name="Add the edit as a child node",
                                             button_type="success")
        self.expand_button = pn.widgets.Button(name="Expand this node")
        self.sheet_title = pn.pane.HTML("")
        self.confidence = pn.pane.HTML("")
        self.diff = pn.pane.HTML("", sizing_mode="stretch_width")
        self.results = pn.pane.HTML("", sizing_mode="stretch_width")
        self.json_download = pn.widgets.FileDownload(
            callback=self._export(explorer.export_json), filename="tree.json",
            label="Download tree JSON", disabled=True)
        self.markdown_download = pn.widgets.FileDownload(
            callback=self._export(explorer.export_markdown), filename="tree.md",
            label="Download Markdown report", disabled=True)

        self.load_button.on_click(lambda _: self._act(self._load))
        self.build_button.on_click(lambda _: self._act(self._build))
        self.correct_button.on_click(lambda _: self._act(self._correct))
        self.edit_button.on_click(lambda _: self._act(self._edit))
        self.expand_button.on_click(lambda _: self._act(self._expand))
        self.graph.param.watch(self._clicked, "selected")
        self._refresh()

    # ------------------------------------------------------------------ actions

    def _act(self, action: Callable[[], str | None]) -> None:
        """Run ``action``; a failure is a message in the page and changes nothing shown (the
        form keeps what the user typed)."""
        try:
            done = action()
            self._refresh()
        except CountercaseError as error:
            self.message.object = render.message(str(error))
            return
        except Exception:  # a bug: its trace goes to the server's log, never to the page
            log.exception("explorer action failed")
            self.message.object = render.message(
                "the explorer failed on this action (an internal error, written to the server "
                "log); the tree is as it was")
            return
        self.message.object = render.message(done, "info") if done else ""

    def _load(self) -> str:
        kind = self.kind.value
        if kind == "text":
            value = self.text.value_input or self.text.value or ""
        elif kind == "sheet":
            raw = self.sheet_file.value
            value = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else ""
        else:
            value = self.case_id.value_input or self.case_id.value or ""
        case = self.explorer.load(kind, value)
        return f"loaded {case.case_id}: review its fact sheet, then build the tree"

    def _build(self) -> str:
        tree = self.explorer.build(int(self.depth.value), int(self.branching.value))
        return f"built the tree of {self.explorer.case.case_id}: {len(tree.tree.nodes)} nodes"

    def _expand(self) -> str:
        children = self.explorer.expand()
        return f"{self.explorer.selected} has {len(children)} children"

    def _clicked(self, event: param.parameterized.Event) -> None:
        if event.new and event.new != self.explorer.selected:
            self._act(lambda: self.explorer.select(event.new) and None)

    def _form(self) -> dict[str, str]:
        return {name: str(getattr(w, "value_input", None) or w.value or "")
                if isinstance(w, pn.widgets.TextInput) else str(w.value)
                for name, w in self.fields.items()}

    def _correct(self) -> str:
        if self.explorer.tree is not None:
            return "the tree is built: edit a node instead (the edit becomes its child)"
        self.explorer.review(self._form())
        return "the case's sheet is corrected"

    def _edit(self) -> str:
        node = self.explorer.edit(self._form(), description=self.description.value_input or "")
        return f"added {node}"

    def _export(self, export: Callable[[], str]) -> Callable[[], io.BytesIO]:
        def callback() -> io.BytesIO:
            try:
                return io.BytesIO(export().encode("utf-8"))
            except CountercaseError as error:
                self.message.object = render.message(str(error))
                return io.BytesIO(b"")
        return callback

    # ------------------------------------------------------------------ what is shown

    def _refresh(self) -> None:
        explorer = self.explorer
        has_tree = explorer.tree is not None
        self.build_button.disabled = explorer.case is None
        self.correct_button.disabled = explorer.case is None or has_tree
        self.edit_button.disabled = self.expand_button.disabled = not has_tree
        self.json_download.disabled = self.markdown_download.disabled = not has_tree
        if explorer.case is None:
            self.sheet_title.object = "<p>Load a case to see its fact sheet.</p>"
            self.confidence.object = self.diff.object = self.results.object = ""
            self.sensitivity.object = ""
            self.graph.nodes = []
            return
        node = explorer.tree.tree.node(explorer.selected) if has_tree else None
        sheet = node.fact_sheet_state if node is not None else explorer.case.sheet
        where = f"node {node.node_id}" if node is not None else f"case {explorer.case.case_id}"
        self.sheet_title.object = f"<h3>Fact sheet of {where}</h3>"
        for name, value in form_values(sheet).items():
            self.fields[name].value = value
        self.confidence.object = render.confidence_table(confidence_rows(sheet))
        if not has_tree:
            self.graph.nodes = []
            self.diff.object = self.results.object = self.sensitivity.object = ""
            return
        layout = render.layout(explorer.graph())
        sensitivity = render.sensitivity_chart(explorer.sensitivity())
        diff = render.side_by_side(explorer.side_by_side())
        results = render.results(explorer.results(), explorer.summary())
        # one message to the browser: the new diff is never shown over the old results, whose
        # cards a click would reach just before they are replaced
        with pn.io.hold():
            self.graph.nodes = layout
            self.graph.selected = explorer.selected
            self.sensitivity.object = sensitivity
            self.diff.object = diff
            self.results.object = results

    def view(self) -> pn.viewable.Viewable:
        side = pn.Column(
            "## COUNTERCASE", self.kind, self.case_id, self.text, self.sheet_file,
            self.load_button, pn.layout.Divider(), self.depth, self.branching, self.build_button,
            pn.layout.Divider(), self.json_download, self.markdown_download, width=330)
        form = pn.Column(self.sheet_title, pn.GridBox(*self.fields.values(), ncols=2),
                         self.description,
                         pn.Row(self.correct_button, self.edit_button, self.expand_button),
                         self.confidence)
        main = pn.Column(
            self.message,
            pn.Row(pn.Column("### Perturbation tree", self.graph, sizing_mode="stretch_width"),
                   pn.Column("### Sensitivity per fact type", self.sensitivity, width=420)),
            form, "### The node against its parent", self.diff,
            "### Results at this node", self.results, sizing_mode="stretch_width")
        return pn.Row(side, main, sizing_mode="stretch_width")


def page(explorer: Explorer) -> pn.viewable.Viewable:
    return ExplorerApp(explorer).view()


def serve(workspace, port: int = 5006, address: str = "127.0.0.1", show: bool = False) -> None:
    """Serve the explorer until interrupted; every browser session gets its own tree."""
    judgments = Judgments(workspace)
    log.info("opening the indexes, fact sheets and chunks once for every session")
    workspace.retriever, workspace.explainer, workspace.edges  # noqa: B018 (warm the caches)
    pn.serve({"/": lambda: page(Explorer(workspace, judgments))}, port=port, address=address,
             show=show, title=TITLE, threaded=False, extra_patterns=[source_route(judgments)],
             websocket_origin=[f"{address}:{port}", f"localhost:{port}", f"127.0.0.1:{port}"])
