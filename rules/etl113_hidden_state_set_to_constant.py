from __future__ import annotations

from typing import TYPE_CHECKING

from etrace_lint.core.findings import Level
from etrace_lint.core.naming import display_name
from etrace_lint.core.rule import ErrorMatch, ErrorRule

if TYPE_CHECKING:  # the adapter imports JAX and braintrace: annotations only
    from etrace_lint.analysis.braintrace_adapter import Compilation
    from etrace_lint.analysis.jaxpr_view import SourceFrame


def describe(exc: BaseException, compilation: Compilation) -> tuple[str, SourceFrame | None]:
    constants = compilation.constant_hidden_writes(exc)
    if not constants:
        return ("a hidden state is given a constant in the step (a literal such as 0.0), which braintrace's "
                "compiler cannot follow, so the model cannot be compiled for online learning; keep such a value "
                "in a brainstate.ShortTermState"), None
    first = constants[0]
    names = ", ".join(dict.fromkeys(display_name(c.path) for c in constants))
    written = [w.frame for w in compilation.state_writes if w.state_id and w.state_id == first.state_id]
    return (f"{names} is set to the constant {first.value} in the step, so its new value depends on nothing; "
            f"braintrace's compiler cannot track a hidden state whose new value is a constant, and the model "
            f"cannot be compiled for online learning: keep a value that is reset every step in a "
            f"brainstate.ShortTermState, or compute the hidden state's new value from the step's inputs or "
            f"its old value"), (written[-1] if written else None)


RULE = ErrorRule(
    id="ETL113",
    name="hidden-state-set-to-constant",
    level=Level.ERROR,
    summary="A hidden state is set to a constant in the step, which the compiler cannot track",
    tags=("compiler", "error"),
    describe=describe,
    error=ErrorMatch(types=("TypeError",), pattern=r"unhashable type: '(?:Literal|[A-Za-z]*Literal)'",
                     origin="braintrace._compiler"),
)
