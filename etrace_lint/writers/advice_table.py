"""The advice as text: one table per target, a row per algorithm (the text, JSON, SARIF and HTML writers share it).

Reads the rows as JSON (as the engine sends them); imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core import advice as R
from ..core.json_types import JsonObject, json_str
from ..core.sizes import format_size
from ..core.verdict import Verdict

RowJson = JsonObject  # an advice row as JSON (``AdviceRow.to_json``)


def _size(value: float | None) -> str:
    return "n/a" if value is None else format_size(int(value))


def _law(law: R.Law | None) -> str:
    if law is None:
        return "n/a"
    terms = [(law.c0, ""), (law.c1, "·B"), (law.c2, "·B²")]
    return " + ".join(f"{c}{unit}" for c, unit in terms if c) or "0"


# the table's words for each weight verdict, short enough for a row to fit in WIDTH columns; the key below
# the table gives each word's meaning
# worst first: a cell too narrow for every count keeps the worst
_SHORT = {verdict.advice_text: word for verdict, word in (
    (Verdict.AGAINST, "against"), (Verdict.NOT_LEARNING, "zero"), (Verdict.NONFINITE, "not finite"),
    (Verdict.MISALIGNED, "misaligned"), (Verdict.APPROXIMATION, "approx"), (Verdict.EXACT, "exact"),
    (Verdict.VACUOUS, "n/a"))}
_KEY = {"against": "learns against BPTT: cosine below 0 on every input draw",
        "zero": "no online gradient while BPTT's is not zero",
        "misaligned": "cosine below the floor, or below 0 on some input draws only",
        "approx": "approximate, cosine at least the floor", "n/a": "BPTT and online both zero"}
_ORDER = list(_SHORT.values())
WIDTH = 120  # the table's lines fit in it; what does not goes below the table
_COLUMN_GAP = 2
_LEAST_WEIGHTS = len("1 misaligned, ...")  # the weights column's room before the laws move below the table


def _counts(row: R.AdviceRow) -> list[str]:
    verdicts = [_SHORT.get(w.verdict.advice_text, w.verdict.advice_text) for w in row.weights]
    shown = sorted(dict.fromkeys(verdicts), key=lambda v: _ORDER.index(v) if v in _ORDER else len(_ORDER))
    return [f"{verdicts.count(v)} {v}" for v in shown]


def _fidelity(row: R.AdviceRow, room: int) -> str:
    """The weight verdicts' counts, as many as fit in ``room`` columns (the rest said below the table)."""
    parts = _counts(row)
    if not parts:
        return "n/a"
    text = ", ".join(parts)
    while len(text) > room and len(parts) > 1:
        parts = parts[:-1]
        text = ", ".join(parts) + ", ..."
    return text


def _cosine(row: R.AdviceRow) -> str:
    cosines = [w.cosine for w in row.weights if w.cosine is not None]
    return f"{min(cosines):.3f}" if cosines else "n/a"


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def _weights(count: int) -> str:
    return f"{count} weight{'s' if count != 1 else ''}"


def _left_out(row: R.AdviceRow) -> list[str]:
    """What a row leaves without learning in BPTT's direction: its weights with no online gradient, and those
    learning against BPTT."""
    return list(dict.fromkeys([*row.zero_gradient_weights, *row.weights_with(Verdict.AGAINST)]))


def _why_preferred(chosen: R.AdviceRow, rows: list[R.AdviceRow]) -> str:
    """Why the recommendation stands although it leaves weights out: what each algorithm that leaves fewer costs."""
    mine = len(_left_out(chosen))
    fewer = [row for row in rows if row is not chosen and row.runs and row.weights and len(_left_out(row)) < mine]
    if not fewer:
        measured = sum(1 for row in rows if row.runs and row.weights)
        return f"none of the {measured} algorithms that run leaves fewer"
    best = min(fewer, key=lambda row: (len(_left_out(row)), -row.closeness))
    theirs = len(_left_out(best))
    leaves = f"{best.label} leaves {theirs}" if theirs else f"{best.label} leaves none"
    if best.closeness > chosen.closeness:
        return f"{leaves}, but its trace does not fit the memory budget at batch {best.batch or 1}"
    if best.closeness < chosen.closeness:
        return (f"{leaves}, but its gradients are further from BPTT (mean cosine {best.closeness:.2f} against "
                f"{chosen.closeness:.2f})")
    flops = f"{best.flops_ratio:.1f}x" if best.flops_ratio is not None else "n/a"
    return f"{leaves}, but costs more ({flops} the flops of a forward step)"


def recommendation(rows: list[RowJson]) -> list[str]:
    """The recommendation, with the weights it leaves not learning or learning against BPTT and why it is
    still preferred; each line is one sentence (weight lists are not cut)."""
    return _recommendation([R.AdviceRow.from_json(row) for row in rows])


def _recommendation(typed: list[R.AdviceRow]) -> list[str]:
    chosen = next((row for row in typed if row.recommended), None)
    if chosen is None:
        return ["no algorithm runs and fits the memory budget with a gradient to compare"]
    lines = [f"* recommended: {chosen.label}"]
    zero, against = list(chosen.zero_gradient_weights), list(chosen.weights_with(Verdict.AGAINST))
    if not zero and not against:
        return lines
    said = []
    if zero:
        said.append(f"{_weights(len(zero))} without an online gradient ({_listed(zero)})")
    if against:
        said.append(f"{_weights(len(against))} learning against BPTT ({_listed(against)})")
    lines.append(f"  it leaves {' and '.join(said)}; still preferred: {_why_preferred(chosen, typed)}")
    return lines


def format_advice_table(rows: list[RowJson], relpath: Callable[[str], str] = lambda path: path) -> str:
    typed = [R.AdviceRow.from_json(row) for row in rows]
    out: list[str] = []
    for target in dict.fromkeys(row.target for row in typed):
        mine = [row for row in typed if row.target == target]
        path, _, factory = target.rpartition("::")
        batch = mine[0].batch
        header = ["algorithm", "compiles", "runs", f"trace @B={batch if batch is not None else '-'}",
                  "law (bytes)", "XLA temp", "flops/fwd", "min cos", "weights"]
        table = [header]
        for row in mine:
            table.append([
                ("* " if row.recommended else "  ") + row.label,
                "yes" if row.compiles else "no", "yes" if row.runs else ("no" if row.compiles else "-"),
                _size(row.trace_bytes), _law(row.trace_bytes_law), _size(row.xla_temp_bytes),
                "n/a" if row.flops_ratio is None else f"{row.flops_ratio:.1f}x", _cosine(row), "",
            ])
        widths = [max(len(line[i]) for line in table) for i in range(len(header) - 1)]
        laws_below = sum(widths) + _COLUMN_GAP * len(widths) + 2 + _LEAST_WEIGHTS > WIDTH
        if laws_below:  # long laws: each goes below the table, the weights keep their column
            law_column = header.index("law (bytes)")
            for line in table:
                del line[law_column]
            del widths[law_column]
        room = max(len(header[-1]), WIDTH - 2 - sum(widths) - _COLUMN_GAP * (len(widths)))
        for line, row in zip(table[1:], mine):
            line[-1] = _fidelity(row, room)
        widths.append(max(len(line[-1]) for line in table))
        steps = mine[0].steps
        measured = mine[0].measured_batch
        out.append(f"\nLearning-rule advice for {relpath(path)}::{factory} (T={steps} steps vs BPTT, "
                   f"steps compiled at batch {measured if measured is not None else 'none'}):\n")
        for index, line in enumerate(table):
            out.append("  " + "  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() + "\n")
            if index == 0:
                out.append("  " + "  ".join("-" * width for width in widths) + "\n")
        shown = {word for row in mine for part in _counts(row) for word in [part.split(" ", 1)[1]]}
        out.extend(f"  {word}: {meaning}\n" for word, meaning in _KEY.items() if word in shown)
        out.extend(f"  {line}\n" for line in _recommendation(mine))
        for row in mine:
            if laws_below and row.trace_bytes_law is not None:
                out.append(f"  {row.label}: trace bytes at batch B: {_law(row.trace_bytes_law)}\n")
            if _fidelity(row, 10 ** 6) != _fidelity(row, room):
                out.append(f"  {row.label}: weights {', '.join(_counts(row))}\n")
            against = row.weights_with(Verdict.AGAINST)
            if against:
                out.append(f"  {row.label}: learning against BPTT: {', '.join(against)}\n")
            if row.zero_gradient_weights:
                out.append(f"  {row.label}: no online gradient: {', '.join(row.zero_gradient_weights)}\n")
        for row in mine:
            if row.error:
                out.append(f"  {row.label}: {row.error}\n")
        for note in dict.fromkeys(f"{row.label}: {row.note}" for row in mine if row.note):
            out.append(f"  {note}\n")
    return "".join(out) + ("\n" if out else "")


def relocated(rows: list[RowJson], relpath: Callable[[str], str]) -> list[RowJson]:
    """The rows with each target's file relative to the root, as the other outputs name files."""
    shown = []
    for row in rows:
        path, _, factory = json_str(row["target"]).rpartition("::")
        shown.append({**row, "target": f"{relpath(path)}::{factory}"})
    return shown
