"""The learning-rule advisor's table in the HTML report: per model, trace memory per algorithm as an
inline SVG bar chart, what each algorithm costs and whether it runs, and its fidelity per weight.

Rows are the advisor's JSON objects (``{"target", "algorithm", "options", "compiles", "runs", "error",
"trace_bytes", "trace_bytes_law", "xla_temp_bytes", "flops_ratio", "zero_gradient_weights",
"weights": [{"weight", "cosine", "relative_error", "verdict"}]}``), shown as given: a figure that
was not measured is "n/a" with the reason, never 0.
"""

from __future__ import annotations

import html
from typing import Sequence

from ..core.json_types import JsonObject, JsonValue, json_list, json_object, optional_float
from .advice_table import recommendation

esc = html.escape

BAR_WIDTH = 360  # px of the longest bar
BAR_HEIGHT = 16
CHAR_WIDTH = 7.3  # of the chart's 12px monospace labels
_VERDICT_CLASS = {"exact": "adv-exact", "approximate": "adv-approx", "misaligned": "adv-bad",
                  "learns against BPTT": "adv-bad",
                  "no online gradient": "adv-bad"}


def rows_for(target: str, advice: Sequence[JsonObject]) -> list[JsonObject]:
    """The rows about one model: its target is ``FILE::FACTORY`` or the model's own name."""
    return [row for row in advice if _names(row.get("target")) & {target}]


def _names(target: object) -> set[str]:
    text = str(target or "")
    return {text, text.rsplit("::", 1)[-1]}


def algorithm_name(row: JsonObject) -> str:
    """``d_rtrl``, or ``d_rtrl (vjp_method=multi-step)`` for a variant with options."""
    options = json_object(row.get("options") or {})
    shown = ", ".join(f"{key}={options[key]}" for key in sorted(options))
    return f"{row.get('algorithm', '?')} ({shown})" if shown else str(row.get("algorithm", "?"))


def size(value: JsonValue) -> str:
    """A number of bytes (None: not measured)."""
    amount = optional_float(value)
    if amount is None:
        return "n/a"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(amount) < 1024 or unit == "GiB":
            return f"{amount:.0f} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1024
    return f"{amount:.1f} GiB"


def _why_unmeasured(row: JsonObject) -> str:
    if not row.get("compiles"):
        return "does not compile"
    if not row.get("runs"):
        return "does not run"
    return "not measured"


def _law(row: JsonObject) -> str:
    law = json_object(row.get("trace_bytes_law") or {})
    if not law:
        return "n/a"
    terms = [(law.get("c0"), ""), (law.get("c1"), "·B"), (law.get("c2"), "·B²")]
    shown = [f"{coefficient:g}{power}" for coefficient, power in terms if coefficient]
    return " + ".join(shown) or "0"


def _bars(prefix: str, rows: Sequence[JsonObject]) -> str:
    """Trace memory per algorithm; one scale for the chart, so bars compare."""
    measured = [float(figure) for row in rows if (figure := optional_float(row.get("trace_bytes"))) is not None]
    largest = max(measured, default=0.0)
    height = len(rows) * (BAR_HEIGHT + 6) + 8
    label_width = max(len(algorithm_name(row)) for row in rows) * CHAR_WIDTH + 12  # the names left of the bars
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="advice-bars" id="{prefix}-bars" '
             f'width="{label_width + BAR_WIDTH + 170:.0f}" height="{height}" role="img" '
             f'aria-label="trace memory per algorithm">']
    for number, row in enumerate(rows):
        y = 4 + number * (BAR_HEIGHT + 6)
        name = algorithm_name(row)
        parts.append(f'<text x="0" y="{y + BAR_HEIGHT - 4}">{esc(name)}</text>')
        value = optional_float(row.get("trace_bytes"))
        if value is None:
            parts.append(f'<text class="na" x="{label_width:.1f}" y="{y + BAR_HEIGHT - 4}" '
                         f'data-algorithm="{esc(name)}">n/a ({_why_unmeasured(row)})</text>')
            continue
        width = BAR_WIDTH * float(value) / largest if largest else 0.0
        parts.append(f'<rect class="bar" x="{label_width:.1f}" y="{y}" width="{max(width, 1.0):.1f}" '
                     f'height="{BAR_HEIGHT}" data-algorithm="{esc(name)}" data-bytes="{int(value)}">'
                     f"<title>{esc(name)}: {size(value)}</title></rect>"
                     f'<text x="{label_width + max(width, 1.0) + 6:.1f}" y="{y + BAR_HEIGHT - 4}">'
                     f"{size(value)}</text>")
    parts.append("</svg>")
    return "".join(parts)


def _cost_table(rows: Sequence[JsonObject]) -> str:
    head = ("<tr><th>algorithm</th><th>compiles</th><th>runs</th><th>trace memory</th>"
            "<th>its law in the batch size B (bytes)"
            "</th><th>XLA temporary</th><th>flops / forward step</th><th>weights with zero online gradient</th></tr>")
    body = []
    for row in rows:
        error = f' <span class="muted">{esc(str(row["error"]))}</span>' if row.get("error") else ""
        flops = row.get("flops_ratio")
        zero = ", ".join(str(w) for w in json_list(row.get("zero_gradient_weights") or [])) or "none"
        runs = "yes" if row.get("runs") else ("no" if row.get("compiles") else "n/a")
        body.append(f'<tr data-algorithm="{esc(algorithm_name(row))}"><td>{esc(algorithm_name(row))}</td>'
                    f'<td>{"yes" if row.get("compiles") else "no"}</td><td>{runs}{error}</td>'
                    f'<td>{size(row.get("trace_bytes"))}</td><td>{esc(_law(row))}</td>'
                    f'<td>{size(row.get("xla_temp_bytes"))}</td>'
                    f'<td>{"n/a" if flops is None else f"{flops:.3g}x"}</td><td>{esc(zero)}</td></tr>')
    return f'<table class="advice-costs">{head}{"".join(body)}</table>'


def _number(value: JsonValue) -> str:
    figure = optional_float(value)
    return "n/a" if figure is None else f"{figure:.3g}"


def _fidelity(rows: Sequence[JsonObject]) -> str:
    """Weights down, algorithms across: each cell the verdict, cosine and relative error against BPTT."""
    weights = list(dict.fromkeys(str(w.get("weight")) for row in rows for w in _weights(row)))
    if not weights:
        return '<p class="muted">no fidelity measured: no algorithm ran a gradient step</p>'
    names = [algorithm_name(row) for row in rows]
    head = "<tr><th>weight</th>" + "".join(f"<th>{esc(name)}</th>" for name in names) + "</tr>"
    body = []
    for weight in weights:
        cells = []
        for name, row in zip(names, rows):
            found = next((w for w in _weights(row) if str(w.get("weight")) == weight), None)
            if found is None:
                cells.append(f'<td class="muted" data-algorithm="{esc(name)}" data-weight="{esc(weight)}" '
                             f'data-verdict="">n/a ({_why_unmeasured(row)})</td>')
                continue
            verdict = str(found.get("verdict", ""))
            cells.append(f'<td class="{_VERDICT_CLASS.get(verdict, "")}" data-algorithm="{esc(name)}" '
                         f'data-weight="{esc(weight)}" data-verdict="{esc(verdict)}">{esc(verdict)}'
                         f'<br><span class="muted">cos {_number(found.get("cosine"))}, rel. err '
                         f'{_number(found.get("relative_error"))}</span></td>')
        body.append(f"<tr><td>{esc(weight)}</td>{''.join(cells)}</tr>")
    return f'<table class="advice-fidelity">{head}{"".join(body)}</table>'


def _weights(row: JsonObject) -> list[JsonObject]:
    """A row's fidelity per weight."""
    return [json_object(weight) for weight in json_list(row.get("weights") or [])]


def advice_section(prefix: str, rows: Sequence[JsonObject]) -> str:
    """The advisor's table for one model, or nothing when it was not asked for."""
    if not rows:
        return ""
    said = "".join(f"<li>{esc(line.strip().lstrip('* '))}</li>" for line in recommendation([dict(r) for r in rows]))
    return (f'<div class="advice" id="{prefix}-advice"><h3>Learning-rule advice (measured)</h3>'
            f'<ul class="advice-recommendation">{said}</ul>'
            f'<p class="muted">Trace memory each algorithm allocates beyond the model\'s own states, at the '
            f"target's batch size</p>{_bars(prefix, rows)}{_cost_table(rows)}"
            f"<h3>Fidelity per weight (online gradient vs BPTT)</h3>{_fidelity(rows)}</div>")


CSS = """
.etl-report .advice-bars text { font-size:12px; fill:#222; } .etl-report .advice-bars text.na { fill:var(--muted); }
.etl-report .advice-bars rect.bar { fill:#5c6bc0; }
.etl-report .adv-exact { background:#e8f5e9; } .etl-report .adv-approx { background:#fff8e1; }
.etl-report .adv-bad { background:#ffebee; }
"""

__all__ = ["CSS", "advice_section", "algorithm_name", "rows_for", "size"]
