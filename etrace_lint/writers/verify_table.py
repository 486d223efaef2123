"""The ``--verify`` summary: one table per model, a row per weight leaf, columns per algorithm.

The runs over one step are shown only where they found something: at T=1
every online gradient must equal BPTT, so an exact row there says nothing new.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2e}" if value and abs(value) < 1e-2 else f"{value:.3f}"


def _verdict(row: Mapping[str, Any]) -> str:
    """The verdict, with the factor when the online gradient is a multiple of BPTT's: ``wrong(2.00x)``."""
    factor = row.get("scale")
    return row["verdict"] if factor is None else f"{row['verdict']}({factor:.2f}x)"


def _shown(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    longest: dict[str, int] = {}
    for row in rows:
        longest[row["model"]] = max(longest.get(row["model"], 0), row["steps"])
    return [r for r in rows if r["steps"] == longest[r["model"]] or r["verdict"] not in ("exact", "n/a")]


def format_verify_table(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return ""
    out = []
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = _shown([r for r in rows if r["model"] == model])
        algorithms = list(dict.fromkeys(r["algorithm"] for r in mine))
        cells: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}
        for row in mine:
            cells.setdefault((row["weight"] + row["leaf"], row["steps"]), {})[row["algorithm"]] = row
        header = ["weight", "T"]
        for algorithm in algorithms:
            header += [algorithm, "rel", "cos"]
        table = [header]
        for (weight, steps), by_algorithm in cells.items():
            line = [weight, str(steps)]
            for algorithm in algorithms:
                measured = by_algorithm.get(algorithm)
                line += ([_verdict(measured), _number(measured["relError"]), _number(measured["cosine"])]
                         if measured else ["-", "-", "-"])
            table.append(line)
        widths = [max(len(line[i]) for line in table) for i in range(len(header))]
        device = next((r["device"] for r in mine if r.get("device")), "")
        out.append(f"\nGradient check of {model} (online vs BPTT{', ' + device if device else ''}):\n")
        for index, line in enumerate(table):
            out.append("  " + "  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() + "\n")
            if index == 0:
                out.append("  " + "  ".join("-" * width for width in widths) + "\n")
    return "".join(out) + "\n"
