"""The ``--verify`` summary: one table per model, a row per weight leaf, columns per algorithm.

The runs over one step are shown only where they found something: at T=1
every online gradient must equal BPTT, so an exact row there says nothing new.
``|BPTT|`` is the norm of BPTT's gradient of the leaf over the row's steps, the
same for every algorithm: a gradient that vanishes or explodes shows there
before any rule has a word for it. A row with no relative error gives the
online gradient's norm instead: ``n/a(online 0)`` where neither gradient
moves the weight, ``wrong(online 0.0123)`` where braintrace moves a weight
BPTT leaves alone.
"""

from __future__ import annotations

from typing import Sequence

from ..core.json_types import JsonObject, JsonValue, json_int, json_str, optional_float


def _number(measured: JsonValue) -> str:
    value = optional_float(measured)
    if value is None:
        return "-"
    return f"{value:.2e}" if value and abs(value) < 1e-2 else f"{value:.3f}"


def _magnitude(measured: JsonValue) -> str:
    """A norm in three significant digits: ``481``, ``0.0201``, ``6.07e-08``."""
    value = optional_float(measured)
    return "-" if value is None else f"{value:.3g}"


def _verdict(row: JsonObject) -> str:
    """The verdict, with the factor when the online gradient is a multiple of BPTT's: ``wrong(2.00x)``; where
    BPTT's gradient gives no relative error to compare, the online gradient's norm, which tells a weight neither
    gradient moves (``n/a(online 0)``) from one only the online gradient moves (``wrong(online 0.0123)``)."""
    factor = optional_float(row.get("scale"))
    verdict = json_str(row["verdict"])
    online = optional_float(row.get("onlineNorm"))
    if optional_float(row.get("relError")) is None and online is not None:
        return f"{verdict}(online {_magnitude(online)})"
    return verdict if factor is None else f"{verdict}({factor:.2f}x)"


def _shown(rows: Sequence[JsonObject]) -> list[JsonObject]:
    longest: dict[str, int] = {}
    for row in rows:
        model = json_str(row["model"])
        longest[model] = max(longest.get(model, 0), json_int(row["steps"]))
    return [r for r in rows if r["steps"] == longest[json_str(r["model"])] or r["verdict"] not in ("exact", "n/a")]


def format_verify_table(rows: Sequence[JsonObject]) -> str:
    if not rows:
        return ""
    out = []
    for model in dict.fromkeys(json_str(r["model"]) for r in rows):
        mine = _shown([r for r in rows if r["model"] == model])
        algorithms = list(dict.fromkeys(json_str(r["algorithm"]) for r in mine))
        cells: dict[tuple[str, int], dict[str, JsonObject]] = {}
        for row in mine:
            weight = json_str(row["weight"]) + json_str(row["leaf"])
            cells.setdefault((weight, json_int(row["steps"])), {})[json_str(row["algorithm"])] = row
        header = ["weight", "T", "|BPTT|"]
        for algorithm in algorithms:
            header += [algorithm, "rel", "cos"]
        table = [header]
        for (weight, steps), by_algorithm in cells.items():
            bptt = next((row["bpttNorm"] for row in by_algorithm.values() if row.get("bpttNorm") is not None), None)
            line = [weight, str(steps), _magnitude(bptt)]
            for algorithm in algorithms:
                measured = by_algorithm.get(algorithm)
                line += ([_verdict(measured), _number(measured["relError"]), _number(measured["cosine"])]
                         if measured else ["-", "-", "-"])
            table.append(line)
        widths = [max(len(line[i]) for line in table) for i in range(len(header))]
        device = next((json_str(r["device"]) for r in mine if r.get("device")), "")
        out.append(f"\nGradient check of {model} (online vs BPTT{', ' + device if device else ''}):\n")
        for index, line in enumerate(table):
            out.append("  " + "  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() + "\n")
            if index == 0:
                out.append("  " + "  ".join("-" * width for width in widths) + "\n")
    return "".join(out) + "\n"
