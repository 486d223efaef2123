"""What the gradient check reads of a user's model and its values.

A model's inputs, outputs, states and gradients are pytrees whose leaves are
arrays or saiunit Quantities (a unit-carrying parameter's gradient is one):
a Quantity is one leaf, and its mantissa is what is measured and compared.
"""

from __future__ import annotations

from typing import TypeAlias

import jax
import saiunit

# one leaf of a model's pytree: an array (or a Python or NumPy scalar), or a Quantity around one
Leaf: TypeAlias = "jax.typing.ArrayLike | saiunit.Quantity"


def is_quantity(value: object) -> bool:
    """Whether ``value`` is a Quantity: a leaf of its own, which ``jax.tree`` would otherwise open."""
    return isinstance(value, saiunit.Quantity)


def mantissa(value: Leaf) -> jax.typing.ArrayLike:
    """The number of a Quantity, the value itself otherwise."""
    return value.mantissa if isinstance(value, saiunit.Quantity) else value

