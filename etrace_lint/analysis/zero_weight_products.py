"""The step's products of two weights whose values both start all zero, and the weights those products starve.

A product of two weights' values used as one effective weight, ``w_a @ w_b`` or ``g[:, None] * m`` (a low-rank
factorisation, a gain times a matrix), has a derivative with respect to each factor that is the other factor's
value: where both start all zero, neither gets any gradient through it, and a factor every path of whose value to
the loss, at this step or through the states it carries to a later one, crosses such products keeps its zero
start, which in turn keeps its partner's gradient at zero: gradient descent never moves either. braintrace's LoRA
op (``braintrace.lora_matmul``, ``braintrace.nn.LoRA``) multiplies its two factors inside the op, and its online
rule gives them the same zero (measured on braintrace 0.2.6 and 0.2.8, as the plain products' zero).

Each product is a cut (:mod:`.gradient_cuts`) only while both its factors stay at zero. A factor that also reaches
the loss around every such product moves there, and so does one an ETP op reads through the product: braintrace's
compiler connects ``m`` to ``braintrace.matmul(x, g[:, None] * m)`` and its online rule moves ``m`` although
BPTT gives it nothing (measured on both lines; the probe reports it as ETL422). The products of such a factor are
no cuts, and the weights are found again without them until none changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import jax.numpy as jnp
import numpy as np
import numpy.typing as npt

from ..core.naming import StatePath
from . import braintrace_adapter as bt
from . import jaxpr_view as jv
from .gradient_cuts import NoGradient, custom_derivative_scopes, loss_ends
from .step_flow import CarriedState, StepFlow

# the plain products of two values, by primitive: the product as the user wrote it
_PRODUCTS = {"dot_general": "@", "mul": "*"}


@dataclass(frozen=True)
class WeightProduct:
    """A product, at the step's top level, of two weight arrays (:func:`zero_weight_products`: whose values both
    start all zero)."""

    site: jv.EqnSite  # the product's equation: where a finding about it lands
    product: str  # the product as the user wrote it: '@' (also jnp.dot, jnp.einsum), '*', 'braintrace.lora_matmul'
    factors: tuple[StatePath, StatePath]  # the ParamStates of its two factors (one path twice when one holds both)
    origins: tuple[jv.Var, jv.Var]  # the step's input vars of the two factors' values
    operands: tuple[int, int]  # the indices of the two factors among the equation's inputs


@dataclass(frozen=True)
class ZeroProductCut:
    """A weight every path of whose value to the step's output crosses products whose factors all start and stay
    at zero: no gradient reaches it, online or by BPTT, and gradient descent never moves it."""

    weight: StatePath  # the ParamState's path
    product: WeightProduct  # the first such product its value meets on its way to the output
    product_count: int  # the such products it meets first on those paths: this one and the others
    partners: tuple[StatePath, ...]  # the other factors of those products, in their order (none but itself: both)


def _all_zero(value: npt.NDArray[np.generic] | None) -> bool:
    """Whether ``value`` is a floating array every element of which is zero."""
    return value is not None and jnp.issubdtype(value.dtype, jnp.floating) and not np.any(value)


def weight_products(sites: Sequence[jv.EqnSite], producer: Callable[[jv.Atom], jv.EqnSite | None],
                    weight_invars: Mapping[jv.Var, StatePath]) -> list[WeightProduct]:
    """Each product of two weight arrays at the step's top level, whatever their values, in the step's order: a
    ``dot_general`` or ``mul`` of two weights' values (through a reshape, a broadcast, a transpose or a cast), or
    a LoRA ETP op's two factors. A weight times itself is one weight, not a product of two.

    ``sites``: the step's equations; ``producer``: the equation that computes a var (the locator's);
    ``weight_invars``: each weight input var -> its ParamState's path."""
    found = []
    for site in sites:
        if site.parents:
            continue
        operands = list(site.eqn.invars)
        lora = bt.lora_factor_operands(site.eqn)
        if lora is not None:
            indices: tuple[int, int] = lora
            product = "braintrace.lora_matmul"
        elif site.primitive in _PRODUCTS and len(operands) == 2:
            indices, product = (0, 1), _PRODUCTS[site.primitive]
        else:
            continue
        first, second = (operands[i] for i in indices)
        if not jv.is_var(first) or not jv.is_var(second):
            continue  # a constant factor
        origins = (jv.value_origin(first, producer), jv.value_origin(second, producer))
        if origins[0] is origins[1]:
            continue  # one weight times itself
        paths = tuple(weight_invars.get(origin) for origin in origins)
        if paths[0] is None or paths[1] is None:
            continue
        found.append(WeightProduct(site, product, (paths[0], paths[1]), (origins[0], origins[1]), indices))
    return found


def zero_weight_products(products: Sequence[WeightProduct],
                         weight_values: Mapping[jv.Var, npt.NDArray[np.generic]]) -> list[WeightProduct]:
    """The products of :func:`weight_products` whose factors both start all zero (a LoRA op's factors after its
    ``b_fn`` and ``a_fn``). ``weight_values``: each weight input var -> its value before the first step."""
    found = []
    for product in products:
        values = [weight_values.get(origin) for origin in product.origins]
        if product.product == "braintrace.lora_matmul":
            values = [None if value is None else bt.lora_factor_value(product.site.eqn, index, value)
                      for index, value in zip(product.operands, values)]
        if all(_all_zero(value) for value in values):
            found.append(product)
    return found


def zero_product_cuts(flow: StepFlow, sites: Sequence[jv.EqnSite], found: Sequence[WeightProduct],
                      weight_vars: Mapping[StatePath, Sequence[jv.Var]], carried: Mapping[StatePath, CarriedState],
                      output_vars: Sequence[jv.Var],
                      connected: Mapping[StatePath, Sequence[jv.EqnSite]]) -> list[ZeroProductCut]:
    """The weights that neither BPTT nor braintrace's online rule ever moves because products of weights that all
    start at zero stand on their every way to the output.

    ``flow``: the step's data flow; ``sites``: its equations; ``found``: its products of zero weights;
    ``weight_vars``: ParamState path -> its input vars; ``carried``: each state the step carries to the next
    (hidden states and untraced ones); ``output_vars``: the step's return value; ``connected``: ParamState path ->
    the ETP ops the compiler connected to it (``gradient_cuts.connected_ops``)."""
    outputs = loss_ends(output_vars)
    if not outputs:
        return []
    blocked = NoGradient(custom_derivative_scopes(sites))
    products = list(found)
    own = {id(product.site.eqn) for product in products}  # a LoRA op's own rule gives its factors the zero
    while products:
        walk = flow.gradient_walk([flow.outputs_of(product.site) for product in products], outputs, carried,
                                  blocked=blocked)
        starved = {weight.weight: weight for weight in walk.starved_weights(weight_vars)
                   if not walk.read_through(tuple(op for op in connected.get(weight.weight, ())
                                                  if id(op.eqn) not in own))}
        lasting = [product for product in products if all(path in starved for path in product.factors)]
        if len(lasting) < len(products):
            products = lasting  # a factor that moves moves its partners: find them again without its products
            continue
        cuts = []
        for weight in starved.values():
            met = [products[number] for number in weight.cuts]
            partners = tuple(dict.fromkeys(path for product in met for path in product.factors
                                           if path != weight.weight))
            cuts.append(ZeroProductCut(weight.weight, met[0], len(met), partners))
        return cuts
    return []
