"""``--output-format html`` and ``etrace-lint report``: one self-contained page (inline CSS, JS and SVG).

An overview (targets, counts by level and rule, filters, a search box), then
per target its learning graph laid out by grandalf, the findings on excerpts
of the user's source with their fix as a diff, and the ``--verify`` table
when it was computed. Each finding links to the node it is drawn on and
each node to its findings. Like every writer it shows what the policy
passed; it leaves nothing out and decides nothing.
"""

from __future__ import annotations

import difflib
import html
import linecache
import os
import uuid
from collections import Counter
from typing import TYPE_CHECKING, Iterable, Sequence, TextIO

from ..core.findings import Edit, Finding, Level, ToolError
from ..core.json_types import JsonObject, JsonValue, optional_float
from ..core.learning_graph import LearningGraph, Node, graphs_by_target
from ..core.places import cell_name, place
from ..core.weight_verdict import WeightVerdict
from .html_advice import CSS as ADVICE_CSS
from .html_advice import advice_section, rows_for
from .html_assets import CSS, JS
from .html_layout import Layout, layout
from .run_info import RunInfo

if TYPE_CHECKING:  # annotations only: printing needs neither the policy nor the settings it loads
    from ..policy.decide import Outcome

# a weight's colour: what it learns, by the strongest claim of its findings (core/weight_verdict.py)
_VERDICT_CLASS = {WeightVerdict.STEP_RAISES: "v-not", WeightVerdict.REFUSED: "v-not", WeightVerdict.NOT_FINITE: "v-not",
                  WeightVerdict.ZERO: "v-not", WeightVerdict.AGAINST: "v-against", WeightVerdict.PARTLY: "v-partly",
                  WeightVerdict.MULTIPLE: "v-not", WeightVerdict.APPROXIMATE: "v-same",
                  WeightVerdict.WITHIN_WINDOW: "v-same", WeightVerdict.LEARNS: "v-learns",
                  WeightVerdict.NOT_MEASURED: "v-unknown"}
_LEVELS = (Level.ERROR, Level.WARNING, Level.NOTE)
_EXCERPT = 2  # lines of source shown either side of a finding's line

esc = html.escape


def write_html(outcome: Outcome, info: RunInfo, stream: TextIO) -> None:
    """The whole page for a run: every target of ``outcome``, in the order of its findings."""
    targets = list(dict.fromkeys([f.target for f in outcome.findings if f.target]
                                 + [e.target for e in outcome.tool_errors]))
    graphs = graphs_by_target(outcome.findings, targets)
    stream.write(render_report(outcome.findings, outcome.tool_errors, graphs, info.verify_rows, info.root,
                               hidden_notes=outcome.hidden_notes, models=info.targets, advice=info.advice_rows))


def render_report(findings: Sequence[Finding], tool_errors: Sequence[ToolError], graphs: Sequence[LearningGraph],
                  verify_rows: Sequence[JsonObject], root: str, fragment: bool = False, hidden_notes: int = 0,
                  models: int | None = None, advice: Sequence[JsonObject] = ()) -> str:
    """The report as HTML: a whole document, or (``fragment``) a ``<div>`` for a notebook cell.

    ``advice``: the learning-rule advisor's rows, each drawn under the model its ``target`` names."""
    paths = _Paths(root)
    # a notebook shows several results on one page: their ids must not meet
    page = f"r{uuid.uuid4().hex[:8]}-" if fragment else ""
    body = [_overview(page, findings, tool_errors, graphs, hidden_notes, models)]
    body += [_tool_errors(tool_errors, paths)] if tool_errors else []
    for number, graph in enumerate(graphs):
        rows = [row for row in verify_rows if row.get("model") == graph.target]
        body.append(_target(f"{page}t{number}", graph, paths, rows,
                            [e for e in tool_errors if e.target == graph.target], rows_for(graph.target, advice)))
    shown = {id(row) for graph in graphs for row in rows_for(graph.target, advice)}
    for number, target in enumerate(dict.fromkeys(str(r.get("target")) for r in advice if id(r) not in shown)):
        # advice about a model this run drew no graph of: shown on its own, not dropped
        section = f"{page}a{number}"
        body.append(f'<section class="target" id="{section}" data-target="{esc(target)}" data-findings="0">'
                    f"<h2>{esc(target)}</h2>{advice_section(section, rows_for(target, advice))}</section>")
    loose = [f for f in findings if not f.target]  # about the linter's own comments (ETL301), not a model
    if loose:
        cards = "".join(_loose(f"{page}x{index}", finding, paths) for index, finding in enumerate(loose))
        body.append(f'<section class="target" id="{page}x" data-target="" data-findings="{len(loose)}">'
                    f"<h2>Not about a model</h2>{cards}</section>")
    report = (f'<div class="etl-report" id="{page}report"><style>{CSS}{ADVICE_CSS}</style>' + "".join(body)
              + f'<script>{JS}etlReport("{page}report");</script></div>')
    if fragment:
        return report
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            "<title>etrace-lint report</title></head><body>" + report + "</body></html>\n")


class _Paths:
    """Relative paths and the source lines excerpts are cut from, each file read once."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.lines: dict[str, list[str] | None] = {}

    def rel(self, path: str) -> str:
        if not self.root:
            return path
        rel = os.path.relpath(path, self.root)
        return path if rel.startswith("..") else rel.replace(os.sep, "/")

    def where(self, path: str, line: int, column: int | None = None) -> str:
        return place(path, line, column, self.rel)

    def source(self, path: str) -> list[str] | None:
        if path not in self.lines:
            try:
                with open(path, encoding="utf-8") as handle:
                    self.lines[path] = handle.read().splitlines()
            except (OSError, UnicodeDecodeError):
                # an IPython cell is no file: IPython keeps its lines in linecache, under the cell's code name
                cell = linecache.getlines(path) if cell_name(path) else []
                self.lines[path] = [line.rstrip("\n") for line in cell] or None
        return self.lines[path]


def _overview(page: str, findings: Sequence[Finding], tool_errors: Sequence[ToolError],
              graphs: Sequence[LearningGraph], hidden_notes: int, models: int | None) -> str:
    levels = Counter(f.level for f in findings)
    rules = Counter((f.rule_id, f.level) for f in findings)
    count = models if models is not None else len(graphs)
    rows = "".join(f'<tr><td><a href="#{page}t{n}">{esc(g.target)}</a></td>'
                   + "".join(f"<td>{sum(1 for f in g.findings if f.level is lv)}</td>" for lv in _LEVELS)
                   + f"<td>{_weights_summary(g)}</td></tr>" for n, g in enumerate(graphs))
    rule_rows = "".join(f'<tr><td><code class="level-{lv.value}">{esc(rid)}</code></td><td>{lv.value}</td>'
                        f"<td>{n}</td></tr>" for (rid, lv), n in sorted(rules.items()))
    options = "".join(f'<option value="{esc(rid)}">{esc(rid)}</option>'
                      for rid in sorted({f.rule_id for f in findings}))
    boxes = "".join(f'<label class="level-{lv.value}"><input type="checkbox" class="f-level" value="{lv.value}" '
                    f"checked> {lv.value} ({levels.get(lv, 0)})</label>" for lv in _LEVELS)
    were, say, them = ("note was", "it says", "it") if hidden_notes == 1 else ("notes were", "they say", "them")
    hidden = (f'<p class="muted">{hidden_notes} {were} hidden by this run, so the graph leaves out what {say}, '
              f"such as a weight that learns through every use and the hidden states its ops drive; "
              f"<code>etrace-lint report</code> or <code>--show-info</code> shows {them}.</p>"
              if hidden_notes else "")
    return (f"<h1>etrace-lint report</h1><p>{count} model{'s' if count != 1 else ''}, {len(findings)} findings "
            f"({levels.get(Level.ERROR, 0)} errors, {levels.get(Level.WARNING, 0)} warnings, "
            f"{levels.get(Level.NOTE, 0)} notes), {len(tool_errors)} tool errors.</p>{hidden}"
            f'<div class="controls"><select class="f-rule" aria-label="rule"><option value="">all rules</option>'
            f'{options}</select>{boxes}<input type="search" class="f-text" placeholder="search findings, '
            f'models, weights" aria-label="search"><span class="f-count muted"></span></div>'
            '<h2>Models</h2><table class="overview"><tr><th>model</th><th>errors</th><th>warnings</th>'
            f"<th>notes</th><th>weights</th></tr>{rows}</table>"
            f'<h2>Findings by rule</h2><table class="rules"><tr><th>rule</th><th>level</th><th>count</th></tr>'
            f"{rule_rows}</table>")


def _weights_summary(graph: LearningGraph) -> str:
    verdicts = Counter(verdict.value for verdict in graph.weights().values())
    return ", ".join(f"{n} {esc(verdict)}" for verdict, n in sorted(verdicts.items())) or "-"


def _tool_errors(tool_errors: Sequence[ToolError], paths: _Paths) -> str:
    items = "".join(f'<li class="level-error">{esc(e.target)}: {esc(e.message)} '
                    f"<span class=muted>({esc(paths.where(e.location.path, e.location.line))})</span></li>"
                    for e in tool_errors)
    return f'<h2>Tool errors</h2><ul class="tool-errors">{items}</ul>'


def _target(prefix: str, graph: LearningGraph, paths: _Paths, verify_rows: Sequence[JsonObject],
            errors: list[ToolError], advice: Sequence[JsonObject] = ()) -> str:
    places = {node.id: number for number, node in enumerate(graph.nodes)}
    blocked_by: dict[int, list[Node]] = {}  # finding -> the nodes its blocked edges point at
    for edge in graph.edges:
        if edge.kind == "blocked":
            for index in edge.findings:
                blocked_by.setdefault(index, []).append(graph.nodes[places[edge.target]])
    cards = "".join(_finding(prefix, index, finding, graph, paths, places, blocked_by)
                    for index, finding in enumerate(graph.findings))
    failed = "".join(f'<p class="level-error">tool error: {esc(e.message)}</p>' for e in errors)
    return (f'<section class="target" id="{prefix}" data-target="{esc(graph.target)}" '
            f'data-findings="{len(graph.findings)}"><h2>{esc(graph.target)}</h2>{failed}'
            f"<h3>Learning graph</h3>{_svg(prefix, graph)}{_verify(verify_rows)}{advice_section(prefix, advice)}"
            f"<h3>Findings</h3>{cards or '<p class=muted>none</p>'}</section>")


def _svg(prefix: str, graph: LearningGraph) -> str:
    if not graph.nodes:
        return '<p class="muted">nothing to draw: no finding names a weight, an op or a state</p>'
    placed = layout(graph)
    ids = {node.id: f"{prefix}-n{i}" for i, node in enumerate(graph.nodes)}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{placed.width:.0f}" height="{placed.height:.0f}" '
             f'viewBox="{placed.left:.0f} {placed.top:.0f} {placed.width:.0f} {placed.height:.0f}" role="img" '
             f'aria-label="learning graph of {esc(graph.target)}"><defs>'
             f'<marker id="{prefix}-arrow" viewBox="0 0 10 10" '
             'refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
             '<path d="M0,0L10,5L0,10z" fill="#777"/></marker></defs>']
    boxes_of: dict[str, list[str]] = {}  # node id -> the boxes drawn around it
    for number, region_box in enumerate(placed.regions):
        for member in region_box.members:
            boxes_of.setdefault(member, []).append(f"{prefix}-b{number}")
    parts += _regions(prefix, graph, placed, ids)
    for edge in placed.edges:
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in edge.points)
        line = (f'<polyline class="edge {edge.kind}" points="{points}" marker-end="url(#{prefix}-arrow)" '
                f'data-from="{ids[edge.source]}" data-to="{ids[edge.target]}"')
        if not edge.findings:
            parts.append(line + "/>")
            continue
        # an edge a finding explains: it links to the finding, and the finding's card to it
        linked = " ".join(f"{prefix}-f{i}" for i in edge.findings)
        why = "; ".join(f"{graph.findings[i].rule_id}: {graph.findings[i].message}" for i in edge.findings)
        parts.append(f'<a class="edge-link" href="#{prefix}-f{edge.findings[0]}">{line} data-findings="{linked}">'
                     f"<title>{esc(why)}</title></polyline></a>")
    for node in graph.nodes:
        box = placed.nodes[node.id]
        verdict = node.verdict.value if node.verdict is not None else ""
        classes = " ".join(filter(None, ["node", node.kind, _VERDICT_CLASS[node.verdict]
                                         if node.verdict is not None else "", "plain" if node.plain else ""]))
        linked = " ".join(f"{prefix}-f{i}" for i in node.findings)
        title = node.label + (f": {verdict}" if verdict else "")
        parts.append(f'<a href="#{prefix}-f{node.findings[0]}" ' if node.findings else "<a ")
        regions = " ".join(boxes_of.get(node.id, ()))
        parts.append(f'class="{classes}" id="{ids[node.id]}" data-findings="{linked}" data-kind="{node.kind}" '
                     f'data-regions="{regions}" '
                     f'data-label="{esc(node.label)}" '
                     f'data-verdict="{esc(verdict)}"><title>{esc(title)}</title>'
                     f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.width:.1f}" height="{box.height:.1f}"/>'
                     f'<text x="{box.x + 9:.1f}" y="{box.y + box.height / 2:.1f}">{esc(node.label)}</text></a>')
    parts.append("</svg>")
    legend = ('<div class="legend muted"><span>green: learns online</span>'
              "<span>green and red dashed: learns partly, through some of its uses only</span>"
              "<span>red dashed: does not learn, or learns a wrong gradient</span>"
              "<span>red double: learns against BPTT (measured)</span>"
              "<span>blue: same-step gradients only</span><span>red dashed edge: a plain op, no ETP</span>"
              "<span>thick red dotted edge: what keeps a weight from learning (links to the finding)</span>"
              "<span>dotted: member of a hidden group</span><span>blue dashed edge: into the step output, "
              "around the hidden states</span><span>orange: a place in the step a finding "
              "names (loop, unit, write)</span><span>grey box: ops inside a scan, while or cond body, a jit "
              "call, a vmap or a brainstate Map</span></div>")
    return f'<div class="graph">{"".join(parts)}</div>{legend}'


def _regions(prefix: str, graph: LearningGraph, placed: Layout, ids: dict[str, str]) -> list[str]:
    """The control-flow regions as labelled boxes, drawn under the edges and nodes (outer boxes first)."""
    labels = {region.id: region for region in graph.regions}
    parts = []
    for number in range(len(placed.regions) - 1, -1, -1):
        box = placed.regions[number]
        region = labels[box.id]
        members = " ".join(ids[m] for m in box.members)
        parts.append(f'<g class="region {esc(region.kind)}" id="{prefix}-b{number}" data-region="{esc(region.kind)}" '
                     f'data-label="{esc(region.label)}" data-members="{members}"><title>ops inside '
                     f'{esc(region.label)}</title><rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.width:.1f}" '
                     f'height="{box.height:.1f}"/><text x="{box.x + 5:.1f}" y="{box.y + 11:.1f}">'
                     f"{esc(region.label)}</text></g>")
    return parts


def _finding(prefix: str, index: int, finding: Finding, graph: LearningGraph, paths: _Paths,
             places: dict[str, int], blocked_by: dict[int, list[Node]]) -> str:
    node = graph.node_of(index)
    node_id = f"{prefix}-n{places[node.id]}"
    blockers = "".join(f' &middot; kept from learning by <a class="to-blocker" href="#{prefix}-n{places[b.id]}">'
                       f"{esc(b.label)}</a>" for b in blocked_by.get(index, ()))
    loc = finding.location
    where = paths.where(loc.path, loc.line, loc.column)
    related = "".join(f"<li>{esc(r.label or 'related')}: <code>{esc(paths.where(r.path, r.line))}</code></li>"
                      for r in finding.related)
    suppressed = f' <span class="muted">(suppressed: {esc(finding.suppressed)})</span>' if finding.suppressed else ""
    return (f'<div class="finding level-{finding.level.value}" id="{prefix}-f{index}" '
            f'data-rule="{esc(finding.rule_id)}" data-level="{finding.level.value}" data-node="{node_id}"'
            f'{_about(finding)}>'
            f'<div><code class="level-{finding.level.value}">{esc(finding.rule_id)}</code> '
            f'<span class="msg">{esc(finding.message)}</span>{suppressed}</div>'
            f'<div class="muted"><code>{esc(where)}</code> &middot; drawn as '
            f'<a class="to-node" href="#{node_id}">{esc(node.label)}</a>{blockers}</div>'
            f"{_excerpt(loc.path, loc.line, paths)}{_diff(finding, paths)}"
            f"{f'<ul class=muted>{related}</ul>' if related else ''}</div>")


def _loose(card_id: str, finding: Finding, paths: _Paths) -> str:
    loc = finding.location
    return (f'<div class="finding level-{finding.level.value}" id="{card_id}" data-rule="{esc(finding.rule_id)}" '
            f'data-level="{finding.level.value}"{_about(finding)}><div><code class="level-{finding.level.value}">'
            f'{esc(finding.rule_id)}</code> <span class="msg">{esc(finding.message)}</span></div>'
            f'<div class="muted"><code>{esc(paths.where(loc.path, loc.line, loc.column))}</code></div>'
            f"{_excerpt(loc.path, loc.line, paths)}</div>")


def _about(finding: Finding) -> str:
    """The weights and hidden states a finding is about, from its subject, as attributes the search reads
    (a readout's weight a note names only in braintrace's words is found by its name)."""
    weights = " ".join(name for name, _ in finding.subject.named_weights)
    states = " ".join(finding.subject.hidden_states)
    return ((f' data-weights="{esc(weights)}"' if weights else "")
            + (f' data-hidden-states="{esc(states)}"' if states else ""))


def _excerpt(path: str, line: int, paths: _Paths) -> str:
    lines = paths.source(path)
    if not lines or not 1 <= line <= len(lines):
        return ""
    first, last = max(1, line - _EXCERPT), min(len(lines), line + _EXCERPT)
    rows = "".join(f'<span{" class=hit" if n == line else ""}>{n:>4}  {esc(lines[n - 1])}</span>'
                   for n in range(first, last + 1))
    return f'<pre class="excerpt">{rows}</pre>'


def _diff(finding: Finding, paths: _Paths) -> str:
    if finding.fix is None:
        return ""
    out = []
    for path in dict.fromkeys(edit.path for edit in finding.fix.edits):
        before = paths.source(path)
        if before is None:
            continue
        after = _apply([e for e in finding.fix.edits if e.path == path], before)
        for text in difflib.unified_diff(before, after, paths.rel(path), paths.rel(path), n=1, lineterm=""):
            kind = "add" if text.startswith("+") and not text.startswith("+++") else \
                "del" if text.startswith("-") and not text.startswith("---") else ""
            out.append(f'<span class="{kind}">{esc(text)}</span>')
    title = f"fix ({esc(finding.fix.applicability)}): {esc(finding.fix.message)}"
    return f'<div class="muted">{title}</div><pre class="excerpt diff">{"".join(out)}</pre>' if out else ""


def _apply(edits: Iterable[Edit], lines: list[str]) -> list[str]:
    text = "\n".join(lines)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1 if line - 1 < len(starts) else len(text)

    for edit in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
        text = text[:offset(edit.line, edit.column)] + edit.replacement + text[offset(edit.end_line, edit.end_column):]
    return text.split("\n")


def _verify(rows: Sequence[JsonObject]) -> str:
    if not rows:
        return ""
    head = "<tr><th>weight</th><th>T</th><th>algorithm</th><th>verdict</th><th>rel. error</th><th>cosine</th></tr>"
    body = "".join(f"<tr><td>{esc(str(r.get('weight', '')) + str(r.get('leaf', '')))}</td><td>{r.get('steps', '')}"
                   f"</td><td>{esc(str(r.get('algorithm', '')))}</td><td>{esc(str(r.get('verdict', '')))}</td>"
                   f"<td>{_number(r.get('relError'))}</td><td>{_cosine(r)}</td></tr>" for r in rows)
    return f'<h3>Gradient check (online vs BPTT)</h3><table class="verify">{head}{body}</table>'


def _number(value: JsonValue) -> str:
    figure = optional_float(value)
    return "n/a" if figure is None else f"{figure:.3g}"


def _cosine(row: JsonObject) -> str:
    """No cosine is measured against a zero gradient: say which one was zero."""
    if row.get("cosine") is not None:
        return _number(row["cosine"])
    zero = [name for name, key in (("online", "onlineNorm"), ("BPTT", "bpttNorm")) if row.get(key) == 0]
    return f"n/a ({' and '.join(zero)} gradient zero)" if zero else "n/a"


__all__ = ["render_report", "write_html"]
