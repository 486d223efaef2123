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

from abc import ABC, abstractmethod
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, Callable, TypeAlias

from .advice import AdviceRow, Law, WeightFidelity
from .json_types import JsonObject, JsonValue
from .verdict import Verdict

PathKey = tuple[str | int, ...]  # a state's path as a finding shows it: ints stay ints


@dataclass(frozen=True)
class CompilerRecord:
    """A record of braintrace's compiler, in its own words (its kind and level as it named them)."""

    kind: str
    level: str
    message: str
    iterations: tuple[int, ...] = ()  # the iterations of an unrolled scan the record is about
    error: str = ""  # the exception the compiler then raised, when the record explains it


@dataclass(frozen=True)
class CompilerError:
    """An exception raised while the step was traced or compiled."""

    error: str  # its class name
    phase: str  # "trace" or "compile"
    message: str


class Violation(ABC):
    """What one of our own rules found (ruff's ``#[violation]``): each analysis rule declares a frozen
    dataclass of it, with typed fields for its facts, that words its message and lays out its properties.

    The properties are the finding's own facts as SARIF and JSON print them, in the order printed; the weights
    and hidden states it is about are its subject's (``about_*``, the hit's weight), which the writers add
    after them under the keys every rule shares (``weight``, ``weights``, ``hiddenStates`` and their paths).
    A key means one thing with one JSON type across every rule: counts are ``weightCount`` and
    ``hiddenStateCount``. A violation type is registered by the rule registry (:func:`register_violation`) so
    the cache can read it back by its class name.
    """

    @abstractmethod
    def message(self) -> str:
        """What a modeller reads."""

    @abstractmethod
    def properties(self) -> JsonObject:
        """The facts SARIF and JSON print beside the message, JSON-ready, in the order printed."""

    @property
    def about_primitive(self) -> str:
        """The op the finding is about, for its subject; empty when the violation names none."""
        return ""

    @property
    def about_hidden_states(self) -> tuple[str, ...]:
        """The hidden states the finding is about, by display name, for its subject."""
        return ()

    @property
    def about_weights(self) -> tuple[str, ...]:
        """The weights the finding names, by display name, for its subject (its hit's weight among them or not)."""
        return ()


class NamesOp(Violation):
    """A violation about one op, which its ``primitive`` field names: the finding's subject takes it."""

    primitive: str

    @property
    def about_primitive(self) -> str:
        return self.primitive


class NamesHiddenStates(Violation):
    """A violation about the hidden states its ``hidden_states`` field names: the finding's subject takes them."""

    hidden_states: tuple[str, ...]

    @property
    def about_hidden_states(self) -> tuple[str, ...]:
        return self.hidden_states


class NamesWeights(Violation):
    """A violation about the weights its ``weights`` field names: the finding's subject takes them."""

    weights: tuple[str, ...]

    @property
    def about_weights(self) -> tuple[str, ...]:
        return self.weights


Nested: TypeAlias = "JsonValue | tuple[Nested, ...]"  # JSON data with tuples where JSON has lists


def listed(value: Nested) -> JsonValue:
    """Tuples, nested ones too, as the lists JSON prints."""
    if isinstance(value, tuple):
        return [listed(item) for item in value]
    return value


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
    # braintrace's learner for the algorithm could not be built, or its online step raised, where BPTT ran: what
    # the probe reports as the model's error (ETL419, ETL410)
    learner_failed: bool = False


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


Details = (CompilerRecord | CompilerError | Violation | ProbeFailure | ProbeSignal | VerifyWeight | VerifyNotRun
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
    weight: str = ""  # the weight the replaced finding was about, as the code names it ("" for none)


_TYPES: dict[str, type[Any]] = {cls.__name__: cls for cls in (
    CompilerRecord, CompilerError, ProbeFailure, ProbeLeaf, ProbeSignal, VerifyLeaf, VerifyWeight,
    VerifyNotRun, VerifyHarness, Advice, AdviceRow, WeightFidelity, Law, Boundary, Measured, StaticEvidence)}


# the violation types of the analysis rules, by class name: filled by the rule registry as it loads the
# rules; it installs its loader here when it is imported, so a finding read back before any rule was asked
# for (a cached run, a worker's result) still finds its violation's type
_VIOLATIONS: dict[str, type[Violation]] = {}
_rule_loader: list[Callable[[], object]] = []


def install_rule_loader(load: Callable[[], object]) -> None:
    """The rule registry's loader, which registers every violation type (:func:`register_violation`)."""
    _rule_loader[:] = [load]


def register_violation(cls: type[Violation]) -> None:
    """Let the cache read findings of this violation type back (a rule module loaded again replaces it)."""
    if cls.__name__ in _TYPES:
        raise RuntimeError(f"violation {cls.__name__} takes the name of a record of core/details.py")
    _VIOLATIONS[cls.__name__] = cls


def _record_type(name: str) -> Callable[..., object] | None:
    """The record or violation class of that name, called with its fields."""
    if name in _TYPES:
        return _TYPES[name]
    if name not in _VIOLATIONS:
        for load in _rule_loader:
            load()
    return _VIOLATIONS.get(name)


def details_to_json(value: object) -> JsonValue:
    """A record of this module (or a tuple of them) as JSON: each record with its ``type``."""
    if isinstance(value, Verdict):
        return {"type": "Verdict", "value": value.value}
    if is_dataclass(value) and not isinstance(value, type):
        return {"type": type(value).__name__,
                **{f.name: details_to_json(getattr(value, f.name)) for f in fields(value)}}
    if isinstance(value, (tuple, list)):
        return [details_to_json(item) for item in value]
    if isinstance(value, dict):  # a learner's options
        return {str(key): details_to_json(item) for key, item in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)  # as the JSON writers print what JSON has no type for


# the record the data names by its ``type``, so its class is known only once the data is read
def details_from_json(data: JsonValue) -> Any:
    """The inverse of :func:`details_to_json`: records by their ``type``, lists as tuples."""
    if isinstance(data, dict) and data.get("type") == "Verdict":
        return Verdict(data["value"])
    kind = data.get("type") if isinstance(data, dict) else None
    if isinstance(data, dict) and isinstance(kind, str) and (cls := _record_type(kind)):
        return cls(**{name: details_from_json(value) for name, value in data.items() if name != "type"})
    if isinstance(data, list):
        return tuple(details_from_json(item) for item in data)
    return data
