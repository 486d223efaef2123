from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import Violation
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name
from etrace_lint.core.rule import AnalysisRule, Hit
from etrace_lint.core.wording import slope_left_out_online, some_entries

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class DeadReluConstraint(Violation):
    """A weight kept at or above a floor by a ReLU in the step's plain code, some of whose entries start where the
    ReLU's slope is zero, so that BPTT gives them no gradient."""

    weight: str
    constraint: str  # the function as the user called it: 'jax.nn.relu', 'jnp.maximum', 'jnp.clip'
    floor: float  # the constant the weight is kept at or above (0 for a relu)
    dead_entries: int  # the weight's entries that start where the constraint's slope is zero
    entries: int  # all its entries
    read_by_etp: bool  # an ETP op reads the weight through the constraint (braintrace.matmul(x, jax.nn.relu(w)))

    def message(self) -> str:
        weight, fn = self.weight, f"`{self.constraint}`"
        bound = "0" if self.floor == 0 else f"{self.floor:g}"
        start = "at or below" if self.constraint == "jax.nn.relu" else "below"
        dead = some_entries(self.dead_entries, self.entries, weight)
        said = (f"{fn} on this line keeps {weight} at or above {bound}, and its slope is 0 at {dead}, which start "
                f"{start} {bound}: BPTT gives those entries no gradient, so trained by BPTT they never leave their "
                f"start")
        online = slope_left_out_online(weight, fn) if self.read_by_etp else ""
        return (f"{said}{online}: start {weight}'s entries above {bound} (jnp.abs of its initial value), or pass "
                f"a constraint with a slope everywhere to the ETP op as its weight_fn, "
                f"braintrace.matmul(x, {weight}, weight_fn=jnp.abs) or jax.nn.softplus, whose slope braintrace's "
                f"online rule applies")

    def properties(self) -> JsonObject:
        # its weight is the finding's subject: the writers print it
        return {"constraint": self.constraint, "floor": self.floor, "deadUnitCount": self.dead_entries,
                "unitCount": self.entries, "readByEtpOp": self.read_by_etp}


def check(context: AnalysisContext) -> Iterator[Hit[DeadReluConstraint]]:
    for found in context.relu_constraints:
        if not found.dead_values:
            continue  # every entry starts where the constraint has a slope
        violation = DeadReluConstraint(display_name(found.weight), found.function, found.floor, found.dead_values,
                                       found.values, bool(found.read_by_etp))
        related = [("weight created here", found.weight)]
        related += [(f"the ETP op that reads {violation.weight} through {found.function}", op)
                    for op in found.read_by_etp[:1]]
        yield Hit(violation, weight_path=found.weight, eqn=found.site, related=tuple(related))


RULE = AnalysisRule(
    id="ETL223",
    name="dead-relu-constraint",
    level=Level.WARNING,
    summary="A weight is kept non-negative by a ReLU in plain code (jax.nn.relu, jnp.maximum, jnp.clip) and some of "
            "its entries start at or below 0, where the ReLU's slope is zero, so BPTT gives them no gradient and "
            "they stay dead",
    tags=("training", "analysis"),
    violations=(DeadReluConstraint,),
    check=check,
)
