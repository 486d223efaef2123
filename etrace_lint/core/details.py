"""What a finding's maker knows beside its message, typed: the facts SARIF and JSON print as properties.

Each maker of findings (the compiler's records and errors, our own rules, the probe, ``--verify``, the
advisor) sets one :data:`Details` record on its finding; later stages add typed facts of their own
(the control flow around the op, the evidence one verdict per weight folds in). Code that acts on a
finding reads these fields; the writers turn them into properties in one place
(``writers/properties.py``), and nothing reads properties back.

Every record is JSON-round-trippable (:func:`details_to_json`, :func:`details_from_json`) so the cache
stores the typed facts, not their printed form.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from .advice import AdviceRow, Law, WeightFidelity
from .verdict import Verdict

PathKey = tuple[str | int, ...]  # a state's path as a finding shows it: ints stay ints


@dataclass(frozen=True)
class CompilerRecord:
    """A record of braintrace's compiler, in its own words (its kind and level as it named them)."""

    kind: str
    level: str
    message: str
    hidden_state_paths: tuple[PathKey, ...] = ()  # the hidden states it names (their names: the Subject's)
    iterations: tuple[int, ...] = ()  # the iterations of an unrolled scan the record is about
    error: str = ""  # the exception the compiler then raised, when the record explains it


@dataclass(frozen=True)
class CompilerError:
    """An exception raised while the step was traced or compiled."""

    error: str  # its class name
    phase: str  # "trace" or "compile"
    message: str


@dataclass(frozen=True)
class RuleFacts:
    """What one of our own rules reports beside its message; None: not reported by that rule."""

    weight_count: int | None = None  # ETL204: the weights and hidden states it counted
    hidden_state_count: int | None = None
    transform: str | None = None
    state: str | None = None
    state_kind: str | None = None
    hidden_states: tuple[str, ...] | None = None
    primitive: str | None = None
    partial: bool | None = None
    etp_layer: str | None = None
    operand_shapes: tuple[tuple[int, ...], ...] | None = None
    weights: tuple[str, ...] | None = None
    braintrace_warning: str | None = None
    vjp_method: str | None = None
    algorithm: str | None = None
    exception: str | None = None
    braintrace_version: str | None = None
    bias_shape: tuple[int, ...] | None = None
    gradient_shape: tuple[int, ...] | None = None


@dataclass(frozen=True)
class ProbeFailure:
    """The learning-signal probe's online step raised."""

    algorithm: str
    exception: str
    batch: int | None
    parameter_shape: tuple[int, ...] | None = None  # set when the failure names a weight
    gradient_shape: tuple[int, ...] | None = None


@dataclass(frozen=True)
class ProbeLeaf:
    leaf: str
    online_norm: float | None
    bptt_norm: float | None
    scale: float | None


@dataclass(frozen=True)
class ProbeSignal:
    """What the probe measured of one weight's leaves that share a verdict."""

    algorithm: str
    steps: int
    batch: int | None
    whole_weight: bool  # False: only some of the weight's leaves
    leaves: tuple[ProbeLeaf, ...]


@dataclass(frozen=True)
class VerifyLeaf:
    """One leaf's online gradient against BPTT, as ``--verify`` measured it."""

    algorithm: str
    steps: int
    weight: str
    leaf: str
    verdict: str
    expected: str  # the verdict the algorithm promises for it
    rel_error: float | None
    cosine: float | None
    scale: float | None
    device: str


@dataclass(frozen=True)
class VerifyWeight:
    """``--verify``'s verdict about a weight: its worst leaf, every leaf when there are several."""

    worst: VerifyLeaf
    leaves: tuple[VerifyLeaf, ...] = ()
    explained_by: str = ""  # the rule of the static finding that explains it


@dataclass(frozen=True)
class VerifyNotRun:
    algorithm: str
    device: str


@dataclass(frozen=True)
class VerifyHarness:
    """``--verify``'s online and BPTT runs disagree on the loss: the check itself is broken."""

    algorithm: str
    steps: int
    online_loss: float
    bptt_loss: float
    device: str


@dataclass(frozen=True)
class Advice:
    """The advisor's finding: the algorithm configured and the measured row of the one it suggests."""

    algorithm: str
    alternative: AdviceRow  # the suggested algorithm's row, as measured


Details = (CompilerRecord | CompilerError | RuleFacts | ProbeFailure | ProbeSignal | VerifyWeight | VerifyNotRun
           | VerifyHarness | Advice)
Measurement = ProbeFailure | ProbeSignal | VerifyWeight | VerifyNotRun | VerifyHarness


@dataclass(frozen=True)
class Boundary:
    """A control-flow boundary around a finding's op: scan, while, cond, jit, vmap, Map, ..."""

    kind: str
    line: int
    column: int
    name: str = ""
    file: str = ""  # the file's name when it is not the op's


@dataclass(frozen=True)
class Measured:
    """A measured finding folded into the static one about the same weight."""

    rule: str
    message: str
    measurement: Measurement | None


@dataclass(frozen=True)
class StaticEvidence:
    """A finding a stronger one about the same weight replaced."""

    rule: str
    message: str
    line: int | None  # None: a note the run only counted, never placed
    kind: str = ""  # the compiler record's kind, when the replaced finding was one (as braintrace named it)


_TYPES: dict[str, type[Any]] = {cls.__name__: cls for cls in (
    CompilerRecord, CompilerError, RuleFacts, ProbeFailure, ProbeLeaf, ProbeSignal, VerifyLeaf, VerifyWeight,
    VerifyNotRun, VerifyHarness, Advice, AdviceRow, WeightFidelity, Law, Boundary, Measured, StaticEvidence)}


def details_to_json(value: Any) -> Any:
    """A record of this module (or a tuple of them) as JSON: each record with its ``type``."""
    if isinstance(value, Verdict):
        return {"type": "Verdict", "value": value.value}
    if is_dataclass(value) and not isinstance(value, type):
        return {"type": type(value).__name__,
                **{f.name: details_to_json(getattr(value, f.name)) for f in fields(value)}}
    if isinstance(value, tuple):
        return [details_to_json(item) for item in value]
    return value


def details_from_json(data: Any) -> Any:
    """The inverse of :func:`details_to_json`: records by their ``type``, lists as tuples."""
    if isinstance(data, dict) and data.get("type") == "Verdict":
        return Verdict(data["value"])
    if isinstance(data, dict) and data.get("type") in _TYPES:
        cls = _TYPES[data["type"]]
        return cls(**{name: details_from_json(value) for name, value in data.items() if name != "type"})
    if isinstance(data, list):
        return tuple(details_from_json(item) for item in data)
    return data
