import re

from etrace_lint.findings import Level
from etrace_lint.rule import ErrorMatch, Rule


def describe(exc, compilation):
    """Name both units and point at the write that changed them."""
    changes = compilation.unit_changes
    if changes:
        write = changes[-1]
        return (f"unit mismatch: a state holding {write.old_unit or 'a unitless value'} is written with "
                f"{write.new_unit or 'a unitless value'}", write.frame)
    units = re.findall(r"Quantity\[([^\]]*)\]", str(exc))
    if len(units) >= 2:
        return f"unit mismatch: {units[0]} against {units[1]}", compilation.last_write
    return f"unit mismatch: {' '.join(str(exc).split())[:200]}", compilation.last_write

RULE = Rule(
    id="ETL101",
    name="unit-mismatch",
    level=Level.ERROR,
    summary="A step writes a state with a different physical unit than the state holds",
    tags=("compiler", "error"),
    error=ErrorMatch(types=("ValueError",), pattern=r"(Quantity\[.*does not match with the origin tree structure.*Quantity\[)|(input/output unit of the state)"),
    describe=describe,
)
