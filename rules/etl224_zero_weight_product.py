from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import NamesWeights
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name, joined
from etrace_lint.core.rule import AnalysisRule, Blocker, Hit
from etrace_lint.core.weight_verdict import WeightVerdict

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class WeightProductFactor(NamesWeights):
    """A weight multiplied by other weights into one effective weight, all of them starting all zero, so that the
    gradient of each, the others' value, is zero."""

    weights: tuple[str, ...]  # the weight, then the weights it is multiplied by (none: it holds both factors)
    product: str  # the product as the user wrote it: '@' (also jnp.dot, jnp.einsum), '*', 'braintrace.lora_matmul'
    product_count: int  # such products the weight meets first: this line's and the others'

    def message(self) -> str:
        weight, partners = self.weights[0], self.weights[1:]
        others = self.product_count - 1
        where = "on this line" if others == 0 else f"on this line and {others} other{'s' if others > 1 else ''}"
        if partners:
            both, neither = ("both", "neither") if len(partners) == 1 else ("all", "none of them")
            said = (f"{weight} is multiplied by {joined(partners)} {where} and {both} start all zero: the gradient "
                    f"of each factor of a product is the other's value, zero, so {neither} gets any gradient, "
                    f"online or by BPTT, and gradient descent never moves {weight} from zero: start one factor "
                    f"non-zero, as LoRA does (the input-facing factor random, only the output-facing one zero)")
        else:
            said = (f"{weight} holds both factors that `{self.product}` multiplies {where}, and both start all "
                    f"zero: the gradient of each factor of a product is the other's value, zero, so {weight} gets "
                    f"no gradient, online or by BPTT, and gradient descent never moves it from zero: start one "
                    f"factor non-zero, as LoRA does (braintrace.nn.LoRA's kernel_init starts both: keep its default, "
                    f"LecunNormal, and set only lora_b to zeros)")
        return said

    def properties(self) -> JsonObject:
        # its weights are the finding's subject: the writers print them
        return {"product": self.product, "productCount": self.product_count}


def check(context: AnalysisContext) -> Iterator[Hit[WeightProductFactor]]:
    for cut in context.zero_product_cuts:
        names = (display_name(cut.weight),) + tuple(display_name(p) for p in cut.partners)
        violation = WeightProductFactor(names, cut.product.product, cut.product_count)
        related = [("weight created here", cut.weight)]
        related += [(f"{display_name(partner)} created here", partner) for partner in cut.partners[:1]]
        yield Hit(violation, weight_path=cut.weight, eqn=cut.product.site, related=tuple(related))


RULE = AnalysisRule(
    id="ETL224",
    name="zero-weight-product",
    level=Level.WARNING,
    summary="Two weights multiplied into one effective weight (a LoRA `A @ B`, a gain times a matrix) both start "
            "all zero, so the gradient of each, the other's value, is zero: neither learns, online or by BPTT",
    tags=("training", "analysis"),
    says=WeightVerdict.ZERO,
    # the compiler's "learns online" of a LoRA op's factors, and a multi-step VJP's plain path: neither moves them
    supersedes=("ETL001", "ETL003", "ETL213"),
    blocker=Blocker("multiplied by a weight that also starts at zero"),
    violations=(WeightProductFactor,),
    check=check,
)
