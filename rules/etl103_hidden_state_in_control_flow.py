from __future__ import annotations

import re
from typing import TYPE_CHECKING

from etrace_lint.core.findings import Level
from etrace_lint.core.rule import ErrorMatch, ErrorRule

if TYPE_CHECKING:  # the adapter imports JAX and braintrace: annotations only
    from etrace_lint.analysis.braintrace_adapter import Compilation
    from etrace_lint.analysis.jaxpr_view import SourceFrame


def describe(exc: BaseException, compilation: Compilation) -> tuple[str, SourceFrame | None]:
    named = re.search(r"within a (\w+) (?:function|region)", str(exc))
    op = named.group(1) if named else "loop or branch"
    fix = ("a fixed-length scan/fori_loop that the compiler can unroll" if op == "while"
           else f"computing the state's new value outside the {op}")
    return (f"a hidden state is computed inside a {op}, which the compiler refuses, so the model cannot be "
            f"compiled for online learning; try {fix}"), None


RULE = ErrorRule(
    id="ETL103",
    name="hidden-state-in-control-flow",
    level=Level.ERROR,
    summary="A hidden state is computed inside a loop or branch the compiler refuses",
    tags=("compiler", "error"),
    describe=describe,
    error=ErrorMatch(types=("NotImplementedError",), pattern=r"hidden states are computed within a"),
)
