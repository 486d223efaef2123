"""What a finding made from the compiler's output is about: the weights, hidden states and other states a
compiler record or exception names, each sorted by what the model's state at its path is.

The writers print them as the finding's properties (``weight``, ``weights``, ``hiddenStates`` and their
paths); the learning graph, ``check()`` and the report read them from the finding's subject.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..analysis import braintrace_adapter as bt
from ..analysis import jaxpr_view as jv
from ..core.findings import Subject
from ..core.naming import StatePath, display_name, path_key
from ..core.rule import ErrorRule

if TYPE_CHECKING:  # the engine's Locator imports braintrace; annotations only
    from ..analysis.locate import Locator


def paths_in(value: object) -> list[StatePath]:
    """Paths held by a record field: a path, or a tuple/list of paths."""
    if isinstance(value, (tuple, list)) and value and all(isinstance(p, (tuple, list)) for p in value):
        return [tuple(p) for p in value]
    if isinstance(value, tuple) and value and all(isinstance(p, (str, int)) for p in value):
        return [value]
    return []


def record_paths(record: bt.RecordView) -> list[StatePath]:
    """Every path a record holds: its weight, its hidden states, each path in its context."""
    paths = []
    if record.weight_path:
        paths.append(record.weight_path)
    paths.extend(tuple(p) for p in record.hidden_paths)
    for value in record.context.values():
        paths.extend(paths_in(value))
    return paths


def misplaced_weights(subject: jv.JaxprEqn | None, locator: Locator) -> tuple[StatePath, ...]:
    """ParamStates an ETP op reads through an operand it does not train: a record that says the op
    has no trainable ParamState then means the state went into the wrong argument."""
    if subject is None or not bt.is_etp_primitive(subject) or len(subject.invars) < 2:
        return ()
    # an ETP op's first operand is its input x (matmul, conv, sparse and LoRA ops); the rest it may train
    first = subject.invars[0]
    path = locator.weight_behind(first) if jv.is_var(first) else None
    return (path,) if path is not None else ()


# records that say an ETP op's trainable operand is no ParamState
NO_PARAMSTATE_KINDS = frozenset({"relation_excluded_no_paramstate", "trainable_invar_not_paramstate"})


def record_subject(record: bt.RecordView, kind: str, locator: Locator, subject: jv.JaxprEqn | None = None) -> Subject:
    """The weight, the other weights, the hidden states and the op a record is about.

    Each path the record holds is sorted by what the model's state there is: braintrace files the state
    it is about as ``weight_path`` whatever its kind (an unread ShortTermState), and a context entry may
    hold weights and hidden states side by side. Where the record only names a var, the ParamState behind
    it; where it says an ETP op has no trainable ParamState, the ones the op reads as its input."""
    weights: list[StatePath] = []
    hidden: list[StatePath] = [tuple(path) for path in record.hidden_paths]
    state: StatePath = ()
    for path in record_paths(record):
        role = locator.state_role(path)
        if role == "weight" or not role and path == record.weight_path:
            weights.append(path)
        elif role == "hidden":
            hidden.append(path)
        elif role and path == record.weight_path:
            state = path
    for var in (record.context.get("invar"), record.context.get("weight_var")):
        behind = locator.weight_path_of_var(var) if var is not None else None
        if behind is not None:
            weights.append(behind)
    if kind in NO_PARAMSTATE_KINDS:
        weights.extend(misplaced_weights(subject, locator))
    elif not weights and subject is not None:  # a record about an op or a loop: the weights it reads
        weights.extend(locator.weights_read_by(subject))
    weights, hidden = list(dict.fromkeys(weights)), list(dict.fromkeys(hidden))
    own = record.weight_path if record.weight_path in weights else ()
    others = tuple(path for path in weights if path != own)
    return Subject(weight=display_name(own) if own else "", weight_path=path_key(own), primitive=record.primitive,
                   hidden_states=tuple(display_name(h) for h in hidden),
                   hidden_state_paths=tuple(path_key(h) for h in hidden),
                   weights=tuple(display_name(w) for w in others), weight_paths=tuple(path_key(w) for w in others),
                   state=display_name(state) if state else "", state_path=path_key(state))


def error_subject(compilation: bt.Compilation, rule: ErrorRule, raised_on: bt.ErrorSubject, primitive: str,
                  locator: Locator) -> Subject:
    """The op an exception is about, the ParamStates the step wrote where the rule shows that write, and
    the states the compiler was handling when it raised, each by what it is."""
    states = [locator.path_of_state(write.state_id) for write in compilation.state_writes
              if write.is_param and rule.error.at_write == "param"]
    states += [locator.path_of_state(id(state)) for state in raised_on.states]
    if compilation.error is not None:  # the hidden states it set to a literal, which the compiler cannot pair
        states += [write.path for write in compilation.constant_hidden_writes(compilation.error)]
    weights = [path for path in dict.fromkeys(states) if path is not None and locator.state_role(path) == "weight"]
    hidden = [path for path in dict.fromkeys(states) if path is not None and locator.state_role(path) == "hidden"]
    # named, not the weight a verdict is about: the writers print one as its ``weight`` all the same
    return Subject(primitive=primitive, weights=tuple(map(display_name, weights)),
                   weight_paths=tuple(map(path_key, weights)), hidden_states=tuple(map(display_name, hidden)),
                   hidden_state_paths=tuple(map(path_key, hidden)))
