from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import NamesHiddenStates, Violation
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name
from etrace_lint.core.rule import AnalysisRule, Blocker, Hit
from etrace_lint.core.weight_verdict import WeightVerdict
from etrace_lint.core.wording import plain_text

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class DecomposedUnderVmap(NamesHiddenStates):
    """A weight mapped over by vmap, whose ETP op became a plain op on its way to a hidden state."""

    weight: str
    hidden_states: tuple[str, ...]
    etp_op: str  # the ETP op vmap decomposed, when only one was
    plain_op: str  # the primitive it became
    braintrace_warning: str  # what braintrace warned, empty when it did not
    input_only: bool = False  # the vmap mapped the op's data input only: braintrace has no batched form of the op

    def message(self) -> str:
        etp = f"`{self.etp_op}`" if self.etp_op else "an ETP op"
        hidden = ", ".join(self.hidden_states)
        if self.input_only:
            return (f"braintrace has no batched form of {etp}, so the `vmap` over its input decomposed it into a "
                    f"plain `{self.plain_op}` and {self.weight} gets no online gradient on its way to hidden state "
                    f"{hidden}")
        return (f"weight {self.weight} is mapped over by `vmap`, so {etp} was decomposed into a plain "
                f"`{self.plain_op}` and {self.weight} gets no online gradient on its way "
                f"to hidden state {hidden}")

    def properties(self) -> JsonObject:
        return {"braintraceWarning": self.braintrace_warning}


@dataclass(frozen=True)
class VmapWarning(Violation):
    """braintrace warned that vmap decomposed an ETP op, and the step keeps no trace of where."""

    braintrace_warning: str

    def message(self) -> str:
        return f"an ETP op was decomposed under vmap: {plain_text(self.braintrace_warning)}"

    def properties(self) -> JsonObject:
        return {"braintraceWarning": self.braintrace_warning}


def check(context: AnalysisContext) -> Iterator[Hit[DecomposedUnderVmap | VmapWarning]]:
    warnings = context.vmap_warnings
    etp_names = context.vmap_decomposed_ops
    uses = context.first_decomposed_uses
    for use in uses:
        violation = DecomposedUnderVmap(display_name(use.weight), tuple(display_name(h) for h in use.hidden),
                                        sorted(etp_names)[0] if len(etp_names) == 1 else "",
                                        use.site.primitive, warnings[0] if warnings else "",
                                        context.vmap_maps_inputs_only)
        yield Hit(violation, weight_path=use.weight, eqn=use.site)
    if warnings and not uses and not any(context.is_vmap_decomposition(s) for s in context.sites):
        # the warning came, but the step keeps no trace of where: say what braintrace said
        yield Hit(VmapWarning(warnings[0]))


RULE: AnalysisRule[DecomposedUnderVmap | VmapWarning] = AnalysisRule(
    id="ETL203",
    name="etp-weight-under-vmap",
    level=Level.WARNING,
    says=WeightVerdict.ZERO,
    blocker=Blocker("op decomposed under vmap"),
    summary=("An ETP op mapped over by vmap with its weight batched is decomposed into plain ops, and its "
             "weight does not learn"),
    tags=("learning", "analysis"),
    violations=(DecomposedUnderVmap, VmapWarning),
    check=check,
)
