"""The plain records that flow from the engine to the policy layer and writers.

Everything a writer needs is on a :class:`Finding`; writers never reach back
into the engine. All records are JSON-round-trippable so the cache can store
them without pickle.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from .details import Boundary, Details, Measured, PathKey, StaticEvidence, details_from_json, details_to_json
from .json_types import (
    JsonObject,
    JsonValue,
    json_float,
    json_int,
    json_list,
    json_object,
    json_objects,
    json_str,
    json_strs,
)


class Level(str, enum.Enum):
    """SARIF result levels, ordered by severity."""

    NOTE = "note"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return _RANK[self]

    @classmethod
    def parse(cls, text: str) -> "Level":
        aliases = {"info": cls.NOTE, "warn": cls.WARNING}
        key = text.strip().lower()
        if key in aliases:
            return aliases[key]
        return cls(key)


_RANK = {Level.NOTE: 0, Level.WARNING: 1, Level.ERROR: 2}


@dataclass(frozen=True)
class Location:
    """A place in a source file. ``path`` is absolute; writers relativise it."""

    path: str
    line: int
    column: int = 1
    label: str = ""

    def to_json(self) -> JsonObject:
        return {"path": self.path, "line": self.line, "column": self.column, "label": self.label}

    @classmethod
    def from_json(cls, data: JsonObject) -> "Location":
        return cls(json_str(data["path"]), json_int(data["line"]), json_int(data.get("column", 1)),
                   json_str(data.get("label", "")))


@dataclass(frozen=True)
class Edit:
    """Replace the text from (line, column) up to (end_line, end_column) of ``path``: lines
    1-based, columns 1-based code points, the end exclusive; an empty range inserts."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    replacement: str

    def to_json(self) -> JsonObject:
        return {"path": self.path, "line": self.line, "column": self.column, "end_line": self.end_line,
                "end_column": self.end_column, "replacement": self.replacement}

    @classmethod
    def from_json(cls, data: JsonObject) -> "Edit":
        return cls(json_str(data["path"]), json_int(data["line"]), json_int(data["column"]),
                   json_int(data["end_line"]), json_int(data["end_column"]), json_str(data["replacement"]))


@dataclass(frozen=True)
class Fix:
    """A rule's mechanical fix (ruff's ``Fix``): what it does and how safe it is.

    ``applicability`` is ``"safe"`` (``--fix`` applies it) or ``"unsafe"`` (it
    may change what the model computes: only with ``--unsafe-fixes``).
    """

    message: str
    edits: tuple[Edit, ...]
    applicability: str = "safe"

    def to_json(self) -> JsonObject:
        return {"message": self.message, "applicability": self.applicability,
                "edits": [edit.to_json() for edit in self.edits]}

    @classmethod
    def from_json(cls, data: JsonObject) -> "Fix":
        return cls(json_str(data["message"]), tuple(Edit.from_json(e) for e in json_objects(data.get("edits"))),
                   json_str(data.get("applicability", "safe")))


@dataclass(frozen=True)
class Subject:
    """What a finding is about, for the code that acts on findings (fixes, verify, one verdict per
    weight, the learning graph).

    Set where the finding is made; the writers print it among the finding's properties (``weight``,
    ``weights``, ``hiddenStates`` and their paths, one type across every rule), and nothing reads
    properties back to learn it. Empty text or tuples: not known, or not about one.
    """

    weight: str = ""  # the weight's display name (``cell.W.weight``): the one weight its verdict is about
    weight_path: PathKey = ()  # its path (ints stay ints)
    primitive: str = ""  # the op the finding is about (``dot_general``)
    hidden_states: tuple[str, ...] = ()  # the hidden states it reaches, by display name
    # the other weights it names (a weight that blocks it, a compiler record's list, every ParamState of the
    # model), by display name and by path (empty: not known), in one order
    weights: tuple[str, ...] = ()
    weight_paths: tuple[PathKey, ...] = ()
    hidden_state_paths: tuple[PathKey, ...] = ()  # the hidden states' paths, in their order (empty: not known)
    state: str = ""  # a state of the model it is about that is neither a weight nor a hidden state
    state_path: PathKey = ()
    etp_layer: str = ""  # the braintrace layer that would make the op an ETP op
    operand_shapes: tuple[tuple[int, ...], ...] = ()  # the op's operand shapes, where a fix needs the ranks
    algorithm: str = ""  # --verify: the online algorithm measured
    suppression_form: str = ""  # ETL301: the suppression comment's form (``noqa``, ...)
    suppression_codes: tuple[str, ...] = ()  # ETL301: the codes in it that matched nothing

    def to_json(self) -> JsonObject:
        """The facts that are set, by field name."""
        facts: dict[str, JsonValue] = {
            "weight": self.weight, "weight_path": list(self.weight_path), "primitive": self.primitive,
            "hidden_states": list(self.hidden_states), "etp_layer": self.etp_layer,
            "operand_shapes": [list(shape) for shape in self.operand_shapes], "algorithm": self.algorithm,
            "suppression_form": self.suppression_form, "suppression_codes": list(self.suppression_codes),
            "weights": list(self.weights), "weight_paths": [list(path) for path in self.weight_paths],
            "hidden_state_paths": [list(path) for path in self.hidden_state_paths], "state": self.state,
            "state_path": list(self.state_path)}
        return {name: value for name, value in facts.items() if value}

    @property
    def named_weights(self) -> tuple[tuple[str, PathKey], ...]:
        """Every weight it is about or names, (display name, path), its own weight first; a path is empty
        where it is not known."""
        own = ((self.weight, self.weight_path),) if self.weight else ()
        paths = self.weight_paths if len(self.weight_paths) == len(self.weights) else ((),) * len(self.weights)
        named = dict(own + tuple(zip(self.weights, paths)))
        return tuple(named.items())

    @classmethod
    def from_json(cls, data: JsonObject) -> "Subject":
        return cls(weight=json_str(data.get("weight", "")),
                   weight_path=tuple(_path_part(part) for part in json_list(data.get("weight_path", []))),
                   primitive=json_str(data.get("primitive", "")),
                   hidden_states=tuple(json_strs(data.get("hidden_states"))),
                   weights=tuple(json_strs(data.get("weights"))), weight_paths=_paths(data.get("weight_paths")),
                   hidden_state_paths=_paths(data.get("hidden_state_paths")),
                   state=json_str(data.get("state", "")),
                   state_path=tuple(_path_part(part) for part in json_list(data.get("state_path", []))),
                   etp_layer=json_str(data.get("etp_layer", "")),
                   operand_shapes=tuple(tuple(json_int(size) for size in json_list(shape))
                                        for shape in json_list(data.get("operand_shapes", []))),
                   algorithm=json_str(data.get("algorithm", "")),
                   suppression_form=json_str(data.get("suppression_form", "")),
                   suppression_codes=tuple(json_strs(data.get("suppression_codes"))))


def _paths(data: JsonValue) -> tuple[PathKey, ...]:
    return tuple(tuple(_path_part(part) for part in json_list(path)) for path in json_list(data or []))


def _path_part(part: JsonValue) -> str | int:
    """One element of a weight's path: ints stay ints."""
    return json_int(part) if isinstance(part, int) else json_str(part)


NO_SUBJECT = Subject()


@dataclass(frozen=True)
class Finding:
    """One problem about one model, on one line of the user's code."""

    rule_id: str
    level: Level
    message: str
    target: str
    location: Location
    related: tuple[Location, ...] = ()
    suppressed: str = ""  # the suppression comment kind that silenced it, if any
    # the route the message describes, in data-flow order: user lines only, each with its label
    flow: tuple[Location, ...] = field(default=(), compare=False)
    fix: Fix | None = field(default=None, compare=False)
    subject: Subject = NO_SUBJECT  # what it is about
    # what its maker knows beside the message, and what later stages add; the writers print these
    # as the finding's properties (``writers/properties.py``)
    details: Details | None = field(default=None, hash=False)
    control_flow: tuple[Boundary, ...] = ()  # the boundaries around its op, outermost first
    measured: tuple[Measured, ...] = field(default=(), hash=False)  # measured findings folded into it
    static_evidence: tuple[StaticEvidence, ...] = ()  # static findings it replaced
    # the compiler connects its weight to a hidden state through an op (ETL001), shown or hidden: what this
    # finding denies is one use of a weight that still learns through another (not printed: ETL001 says it)
    weight_connected: bool = False

    @property
    def path(self) -> str:
        return self.location.path

    @property
    def line(self) -> int:
        return self.location.line

    def sort_key(self) -> tuple[str, int, int, str, str, str]:
        return (self.location.path, self.location.line, self.location.column,
                self.rule_id, self.target, self.message)

    def to_json(self) -> JsonObject:
        return {
            "rule_id": self.rule_id,
            "level": self.level.value,
            "message": self.message,
            "target": self.target,
            "location": self.location.to_json(),
            "related": [loc.to_json() for loc in self.related],
            "suppressed": self.suppressed,
            "flow": [loc.to_json() for loc in self.flow],
            "fix": self.fix.to_json() if self.fix is not None else None,
            "subject": self.subject.to_json(),
            "details": details_to_json(self.details),
            "control_flow": details_to_json(self.control_flow),
            "measured": details_to_json(self.measured),
            "static_evidence": details_to_json(self.static_evidence),
            "weight_connected": self.weight_connected,
        }

    @classmethod
    def from_json(cls, data: JsonObject) -> "Finding":
        fix = data.get("fix")
        return cls(
            rule_id=json_str(data["rule_id"]),
            level=Level(data["level"]),
            message=json_str(data["message"]),
            target=json_str(data["target"]),
            location=Location.from_json(json_object(data["location"])),
            related=tuple(Location.from_json(r) for r in json_objects(data.get("related"))),
            suppressed=json_str(data.get("suppressed", "")),
            flow=tuple(Location.from_json(step) for step in json_objects(data.get("flow"))),
            fix=Fix.from_json(json_object(fix)) if fix else None,
            subject=Subject.from_json(json_object(data.get("subject") or {})),
            details=details_from_json(data.get("details")),
            control_flow=details_from_json(data.get("control_flow") or []),
            measured=details_from_json(data.get("measured") or []),
            static_evidence=details_from_json(data.get("static_evidence") or []),
            weight_connected=bool(data.get("weight_connected")),
        )


@dataclass(frozen=True)
class ToolError:
    """A target that could not be linted: the linter, not the model, is stuck.

    Kept apart from findings (pyflakes keeps syntax errors apart from flakes):
    it always makes the run exit 2 and is reported as a SARIF tool
    execution notification.
    """

    target: str
    message: str
    location: Location
    reason: str = "error"  # import-error, no-factory, factory-error, bad-return, timeout, crash, ...

    def sort_key(self) -> tuple[str, int, str, str]:
        return (self.location.path, self.location.line, self.target, self.message)

    def to_json(self) -> JsonObject:
        return {"target": self.target, "message": self.message,
                "location": self.location.to_json(), "reason": self.reason}

    @classmethod
    def from_json(cls, data: JsonObject) -> "ToolError":
        return cls(json_str(data["target"]), json_str(data["message"]),
                   Location.from_json(json_object(data["location"])), json_str(data.get("reason", "error")))


@dataclass
class TargetResult:
    """What linting one target produced, plus the files its import pulled in."""

    target: str
    findings: list[Finding] = field(default_factory=list)
    tool_errors: list[ToolError] = field(default_factory=list)
    dependencies: list[str] = field(default_factory=list)  # files it read, keyed by content
    distributions: dict[str, str] = field(default_factory=dict)  # installed distributions it imported: versions
    verify_rows: list[JsonObject] = field(default_factory=list)  # per-weight --verify results
    advice_rows: list[JsonObject] = field(default_factory=list)  # per-algorithm --advise rows (AdviceRow.to_json)
    # findings counted per rule instead of built, and the rules the engine was told to count
    # only (empty: every finding was built)
    notes_left_out: dict[str, int] = field(default_factory=dict)
    counted_only: frozenset[str] = frozenset()
    seconds: float = 0.0  # how long linting took: the next run schedules slow files first

    def serves(self, count_only: frozenset[str]) -> bool:
        """Whether this result holds every finding a run that counts only ``count_only`` shows."""
        return self.counted_only <= count_only

    def to_json(self) -> JsonObject:
        return {
            "target": self.target,
            "notes_left_out": dict(self.notes_left_out),
            "counted_only": [rule for rule in sorted(self.counted_only)],
            "verify_rows": list(self.verify_rows),
            "advice_rows": list(self.advice_rows),
            "findings": [f.to_json() for f in self.findings],
            "tool_errors": [e.to_json() for e in self.tool_errors],
            "dependencies": list(self.dependencies),
            "distributions": dict(self.distributions),
            "seconds": self.seconds,
        }

    @classmethod
    def from_json(cls, data: JsonObject) -> "TargetResult":
        return cls(
            target=json_str(data["target"]),
            findings=[Finding.from_json(f) for f in json_objects(data.get("findings"))],
            tool_errors=[ToolError.from_json(e) for e in json_objects(data.get("tool_errors"))],
            dependencies=json_strs(data.get("dependencies")),
            distributions={name: json_str(version)
                           for name, version in json_object(data.get("distributions") or {}).items()},
            verify_rows=json_objects(data.get("verify_rows")),
            advice_rows=json_objects(data.get("advice_rows")),
            notes_left_out={rule: json_int(count)
                            for rule, count in json_object(data.get("notes_left_out") or {}).items()},
            counted_only=frozenset(json_strs(data.get("counted_only"))),
            seconds=float(json_float(data.get("seconds") or 0.0)),
        )
