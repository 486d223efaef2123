"""What the traced step does with the model's states: the values it returns, the states it reads,
the hidden states it sets to a constant. Part of the adapter over braintrace's and brainstate's
private layout (``ModuleInfo``'s tables, the frames of a failed ``extract_module_info``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, TypeAlias

import brainstate
import jax

from ...core.naming import StatePath
from .. import jaxpr_view as jv

if TYPE_CHECKING:  # braintrace's own classes, for annotations only
    from braintrace._compiler.module_info import ModuleInfo


# a state of the model, whatever value it holds (an array, a quantity, a pytree of them)
ModelState: TypeAlias = "brainstate.State[Any]"

def step_output_vars(minfo: ModuleInfo) -> list[jv.Var]:
    """The vars of the traced step that are the model's return value (the states' new values follow
    them in the jaxpr's outputs)."""
    outs = jv.open_jaxpr(minfo.closed_jaxpr).outvars[:minfo.num_var_out]
    return [v for v in outs if jv.is_var(v)]


@dataclass(frozen=True)
class ConstantHiddenWrite:
    """A hidden state whose new value in the traced step is a literal, not a var."""

    path: StatePath
    value: str  # the literal, as the step wrote it
    state_id: int


def constant_hidden_writes(exc: BaseException) -> list[ConstantHiddenWrite]:
    """The hidden states the compiler was pairing with their new values when it failed on a literal
    (``extract_module_info`` keys a dict by each new value, and a literal cannot be a key)."""
    found = []
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        tb = tb.tb_next
        if not str(frame.f_globals.get("__name__", "")).startswith("braintrace._compiler"):
            continue
        outvars = frame.f_locals.get("hidden_path_to_outvar")
        ids = frame.f_locals.get("state_id_to_path")
        if not isinstance(outvars, Mapping) or not isinstance(ids, Mapping):
            continue
        id_of = {tuple(path): state_id for state_id, path in ids.items() if isinstance(path, (tuple, list))}
        for path, out in outvars.items():
            if isinstance(out, jv.Literal):
                found.append(ConstantHiddenWrite(tuple(path), str(out.val), id_of.get(tuple(path), 0)))
    return found


def state_invars(minfo: ModuleInfo, state: ModelState) -> tuple[jv.Var, ...]:
    """The vars through which the traced step reads ``state`` (none when the step does not)."""
    for st, ins in zip(minfo.compiled_model_states, minfo.state_tree_invars):
        if st is state:
            return tuple(v for v in jax.tree.leaves(ins) if jv.is_var(v))
    return ()


def is_global_random_state(state: object) -> bool:
    """brainstate's process-wide RandomState (``brainstate.random.DEFAULT``): created by no model."""
    default = getattr(brainstate.random, "DEFAULT", None)
    return state is not None and default is not None and state is default
