from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import NamesHiddenStates, NamesOp, listed
from etrace_lint.core.findings import Finding, Fix, Level, Subject
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name
from etrace_lint.core.rule import AnalysisRule, Fixable, Hit, SourceTexts
from etrace_lint.core.weight_verdict import WeightVerdict
from etrace_lint.fixes.etp import etp_fix

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext
    from etrace_lint.analysis.plain_uses import PlainUse

# the ETP op that does what a plain primitive does
_ETP_FOR = {
    "dot_general": "braintrace.matmul instead of `@` / jnp.dot on this line",
    "mul": "braintrace.element_wise instead of a plain product on this line",
    "conv_general_dilated": "braintrace.conv instead of a plain convolution on this line",
}
# brainevent's and jax.experimental.sparse's sparse and event-driven products (csrmv, binary_fcnmm,
# ell_binary_matvec, float_jitumv, bcoo_dot_general, ...): their ETP counterpart is a sparse matmul
_SPARSE_OP = re.compile(r"(?:^|_)(?:b?csr|csc|b?coo|ell|fcn|jit[a-z])")
_ETP_FOR_SPARSE = ("braintrace.nn.SparseLinear (a brainunit.sparse CSR or COO matrix, through "
                   "braintrace.sparse_matmul) in place of this sparse op")


def _weight_product(context: AnalysisContext, use: PlainUse) -> tuple[str, str] | None:
    """The display names of the two weights whose product this plain matmul is (``w_a @ w_b``), if it is one."""
    for product in context.weight_products:
        if product.site.eqn is use.site.eqn and product.product == "@":
            first, second = product.factors
            return display_name(first), display_name(second)
    return None


def _fix(context: AnalysisContext, use: PlainUse, weight: str,
         factors: tuple[str, str] | None) -> tuple[str, str]:
    """Where the fix goes: the layer that owns the weight when a braintrace twin of it exists,
    else the op on this line; and the twin, if any. ``factors``: the two weights the op multiplies."""
    if factors is not None:
        # braintrace.matmul takes an input and one weight: the product of two weights is braintrace's LoRA op
        return (f"{factors[0]} @ {factors[1]} multiplies two weights, and braintrace.matmul takes an input and one "
                f"weight; where the product meets its input x, use braintrace.lora_matmul(x, {factors[0]}, "
                f"{factors[1]}) (x @ {factors[0]} @ {factors[1]} as one ETP op, both factors traced) or "
                f"braintrace.nn.LoRA"), ""
    owner = context.owner_layer(use.weight)
    twin = owner.etp_twin
    created = context.locator.of_state(use.weight)
    where = f" (created on line {created.line})" if created is not None else ""
    if twin:
        return f"make {weight}'s layer a {twin} instead of a {owner.public_name}{where}", twin
    op = use.site.primitive
    library = owner.library
    if library and not _SPARSE_OP.search(op):
        # the op is inside a library layer the user cannot rewrite, and braintrace has no ETP version of it
        same = f" (braintrace.nn.{owner.class_name} is that same class)" if owner.in_braintrace_nn else ""
        return (f"{weight} belongs to a {library}{where}, which braintrace has no ETP version of{same}, so it "
                f"can only be trained by BPTT or apart from the online learner; if that is intended, silence "
                f"this line with `# noqa: ETL201`"), ""
    etp = _ETP_FOR.get(op) or (_ETP_FOR_SPARSE if _SPARSE_OP.search(op) else None)
    return (f"use {etp}" if etp else "use an ETP op such as braintrace.matmul or braintrace.element_wise here"), ""


@dataclass(frozen=True)
class PlainOpPath(NamesOp, NamesHiddenStates, Fixable):
    """A weight reaches hidden states through a plain op, which no eligibility trace follows."""

    weight: str
    hidden_states: tuple[str, ...]
    primitive: str
    partial: bool  # the weight also learns through an ETP op: only this path is missing
    advice: str  # what to write instead: the braintrace layer, or the ETP op
    etp_layer: str = ""  # the braintrace layer that would make the op an ETP op, if one exists
    operand_shapes: tuple[tuple[int, ...], ...] | None = None  # a dot_general's: its fix reads the ranks
    factors: tuple[str, ...] = ()  # the two weights the op multiplies (``w_a @ w_b``): no braintrace.matmul fixes it

    def message(self) -> str:
        hidden = ", ".join(self.hidden_states)
        if self.partial:
            return (f"{self.weight} learns online through an ETP op, but this plain `{self.primitive}` also carries "
                    f"it into {hidden}; that path is missing from its online gradient: {self.advice}")
        return (f"{self.weight} reaches {hidden} through a plain `{self.primitive}`, so it gets no online gradient: "
                f"{self.advice}")

    def properties(self) -> JsonObject:
        printed: JsonObject = {"primitive": self.primitive, "partial": self.partial}
        if self.etp_layer:
            printed["etpLayer"] = self.etp_layer
        if self.operand_shapes is not None:
            printed["operandShapes"] = listed(self.operand_shapes)
        return printed

    @property
    def about_weights(self) -> tuple[str, ...]:
        return self.factors  # the other factor, which the advice names

    def fix(self, finding: Finding, sources: SourceTexts) -> Fix | None:
        return None if self.factors else etp_fix(finding, sources)


def check(context: AnalysisContext) -> Iterator[Hit[PlainOpPath]]:
    if not context.single_step_vjp:  # a multi-step VJP learns these paths within each window: ETL213's
        return
    # a weight no gradient reaches at all (gradient_free_weights): an ETP op would not give it one either; a path
    # through a value with a zero derivative (a rounding, a stop_gradient) is not among its plain uses
    no_gradient = context.gradient_free_weights
    # an op that vmap decomposed is ETL203's: the user wrote an ETP op there
    for use in context.first_plain_uses:
        if tuple(use.weight) in no_gradient:
            continue
        op = use.site.primitive
        weight = display_name(use.weight)
        factors = _weight_product(context, use) if op == "dot_general" else None
        fix, twin = _fix(context, use, weight, factors)
        # the fix of `W @ x` is exact only for a vector x: the fix reads the ranks
        shapes = use.site.operand_shapes if op == "dot_general" else ()
        violation = PlainOpPath(weight, tuple(display_name(h) for h in use.hidden), op, use.partial, fix, twin,
                                shapes if op == "dot_general" else None, factors or ())
        yield Hit(violation, weight_path=use.weight, eqn=use.site,
                  related=(("weight created here", use.weight),),
                  subject=Subject(primitive=op, etp_layer=twin or "", operand_shapes=shapes))


RULE = AnalysisRule(
    id="ETL201",
    name="weight-through-plain-op",
    level=Level.WARNING,
    says=WeightVerdict.ZERO,
    summary=("A weight reaches a hidden state through a plain JAX op instead of an ETP op, so that path gets "
             "no online gradient"),
    tags=("learning", "analysis"),
    violations=(PlainOpPath,),
    check=check,
    flow="weight",
)
