"""The advice as text: one table per target, a row per algorithm.

Reads the rows as JSON (as the engine sends them); imports nothing heavy.
"""

from __future__ import annotations

from ...core.sizes import format_size


def _size(value) -> str:
    return "n/a" if value is None else format_size(int(value))


def _law(law: dict | None) -> str:
    if not law or law.get("c0") is None:
        return "n/a"
    terms = [(law["c0"], ""), (law["c1"], "·B"), (law["c2"], "·B²")]
    return " + ".join(f"{c}{unit}" for c, unit in terms if c) or "0"


def _fidelity(row: dict) -> str:
    verdicts = [w["verdict"] for w in row.get("weights") or ()]
    if not verdicts:
        return "n/a"
    counted = {v: verdicts.count(v) for v in dict.fromkeys(verdicts)}
    return ", ".join(f"{n} {v}" for v, n in counted.items())


def _cosine(row: dict) -> str:
    cosines = [w["cosine"] for w in row.get("weights") or () if w["cosine"] is not None]
    return f"{min(cosines):.3f}" if cosines else "n/a"


def label(row: dict) -> str:
    multi = (row.get("options") or {}).get("vjp_method") == "multi-step"
    return row["algorithm"] + (":multi-step" if multi else "")


def format_advice_table(rows: list[dict], relpath=lambda path: path) -> str:
    out = []
    for target in dict.fromkeys(row["target"] for row in rows):
        mine = [row for row in rows if row["target"] == target]
        path, _, factory = target.rpartition("::")
        batch = mine[0].get("batch")
        header = ["algorithm", "compiles", "runs", f"trace @B={batch if batch is not None else '-'}",
                  "law (bytes)", "XLA temp", "flops/fwd", "min cos", "weights", "zero-gradient"]
        table = [header]
        for row in mine:
            table.append([
                ("* " if row.get("recommended") else "  ") + label(row),
                "yes" if row["compiles"] else "no", "yes" if row["runs"] else ("no" if row["compiles"] else "-"),
                _size(row["trace_bytes"]), _law(row.get("trace_bytes_law")), _size(row["xla_temp_bytes"]),
                "n/a" if row["flops_ratio"] is None else f"{row['flops_ratio']:.1f}x", _cosine(row),
                _fidelity(row), ", ".join(row.get("zero_gradient_weights") or ()) or "-",
            ])
        widths = [max(len(line[i]) for line in table) for i in range(len(header))]
        steps = mine[0].get("steps")
        measured = mine[0].get("measured_batch")
        out.append(f"\nLearning-rule advice for {relpath(path)}::{factory} (T={steps} steps vs BPTT, "
                   f"steps compiled at batch {measured if measured is not None else 'none'}):\n")
        for index, line in enumerate(table):
            out.append("  " + "  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() + "\n")
            if index == 0:
                out.append("  " + "  ".join("-" * width for width in widths) + "\n")
        chosen = [row for row in mine if row.get("recommended")]
        if chosen:
            out.append(f"  * recommended: {label(chosen[0])}\n")
        else:
            out.append("  no algorithm runs and fits the memory budget with a gradient to compare\n")
        for row in mine:
            if row.get("error"):
                out.append(f"  {label(row)}: {row['error']}\n")
        for note in dict.fromkeys(f"{label(row)}: {row['note']}" for row in mine if row.get("note")):
            out.append(f"  {note}\n")
    return "".join(out) + ("\n" if out else "")


def relocated(rows: list[dict], relpath) -> list[dict]:
    """The rows with each target's file relative to the root, as the other outputs name files."""
    shown = []
    for row in rows:
        path, _, factory = row["target"].rpartition("::")
        shown.append({**row, "target": f"{relpath(path)}::{factory}"})
    return shown
