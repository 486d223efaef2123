from __future__ import annotations

import re
from typing import TYPE_CHECKING

from etrace_lint.core.findings import Level
from etrace_lint.core.rule import ErrorMatch, ErrorRule

if TYPE_CHECKING:  # the adapter imports JAX and braintrace: annotations only
    from etrace_lint.analysis.braintrace_adapter import Compilation
    from etrace_lint.analysis.jaxpr_view import SourceFrame


def _unit(shown: str) -> str:
    return "a unitless value" if shown == "1" else shown


def describe(exc: BaseException, compilation: Compilation) -> tuple[str, SourceFrame | None]:
    """Name both units, as the exception states them, and point at the write that changed them."""
    changes = compilation.unit_changes
    at = changes[-1].frame if changes else compilation.last_write
    text = str(exc)
    # saiunit refusing arithmetic on two units, inside the step: the line is the expression
    # ("units do not match: mV != nA", or converting them: "... (units are 1 and mA).")
    operands = re.search(r"units do not match:\s*(\S+)\s*!=\s*(\S+)|\(units are (\S+) and (\S+?)\)", text)
    if operands:
        first, second = (_unit(u) for u in operands.groups() if u is not None)
        return f"unit mismatch: {first} and {second} meet in one expression", None
    # braintrace's own check after tracing: "... unit of the state ('v',) ... Input unit: mV ... Output unit: mA"
    io_units = re.search(r"Input unit:\s*(\S+).*?Output unit:\s*(\S+)", text, re.S)
    if io_units:
        state = re.search(r"unit of the state (.+?) does not match", text)
        which = f"state {state.group(1)}" if state else "a state"
        return (f"unit mismatch: {which} holds {io_units.group(1)} but the step writes it with "
                f"{io_units.group(2)}", at)
    # brainstate's tree check while tracing fires first: "... Quantity[mV] ... Quantity[mA]"
    units = re.findall(r"Quantity\[([^\]]*)\]", text)
    if len(units) >= 2:
        return f"unit mismatch: a state holding {units[0]} is written with {units[1]}", at
    if len(units) == 1 and not changes:
        return f"unit mismatch: a state and the value written to it disagree: {units[0]} against no unit", at
    if changes:
        return (f"unit mismatch: a state holding {changes[-1].old_unit or 'a unitless value'} is written with "
                f"{changes[-1].new_unit or 'a unitless value'}", at)
    return f"unit mismatch: {' '.join(text.split())[:200]}", at


RULE = ErrorRule(
    id="ETL101",
    name="unit-mismatch",
    level=Level.ERROR,
    summary=("The step mixes physical units: two units in one expression, or a state written with a unit it "
             "does not hold"),
    tags=("compiler", "error"),
    error=ErrorMatch(types=("ValueError", "UnitMismatchError", "DimensionMismatchError"),
                     pattern=(r"(units do not match)|(\(units are \S+ and )"
                              r"|(Quantity\[.*does not match with the origin tree structure)"
                              r"|(does not match with the origin tree structure.*Quantity\[)"
                              r"|(input/output unit of the state)")),
    describe=describe,
)
