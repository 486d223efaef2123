"""The advice's rows: one algorithm on one target, as measured. A figure not measured is None.

Plain data: :mod:`etrace_lint.verify.advise` measures the rows, an advisor finding carries the row
it suggests, the writers print them."""

from __future__ import annotations

from dataclasses import dataclass

from .json_types import (
    JsonObject,
    json_int,
    json_list,
    json_object,
    json_objects,
    json_str,
    json_strs,
    optional_float,
    optional_int,
    optional_str,
)
from .verdict import Verdict


@dataclass(frozen=True)
class Law:
    """Trace bytes at batch size B: ``c0 + c1 * B + c2 * B ** 2``."""

    c0: int
    c1: int
    c2: int

    def at(self, batch: int) -> int:
        return self.c0 + self.c1 * batch + self.c2 * batch * batch

    def to_json(self) -> JsonObject:
        return {"c0": self.c0, "c1": self.c1, "c2": self.c2}

    def describe(self) -> str:
        terms = [f"{c} B^{p}" if p > 1 else (f"{c} B" if p == 1 else str(c))
                 for c, p in ((self.c0, 0), (self.c1, 1), (self.c2, 2)) if c]
        return " + ".join(terms) or "0"


@dataclass(frozen=True)
class WeightFidelity:
    weight: str  # the weight as the model's code names it, with its leaf (``cell.W['weight']``)
    cosine: float | None  # None: either side is zero
    relative_error: float | None  # None: BPTT is zero
    verdict: Verdict  # written as its advice_text
    draws: tuple[float | None, ...] = ()  # a direction: the cosine on each input draw (None: not measured)

    def to_json(self) -> JsonObject:
        shown: JsonObject = {"weight": self.weight, "cosine": self.cosine, "relative_error": self.relative_error,
                                 "verdict": self.verdict.advice_text}
        return {**shown, "draws": [draw for draw in self.draws]} if self.draws else shown

    @classmethod
    def from_json(cls, data: JsonObject) -> WeightFidelity:
        return cls(json_str(data["weight"]), optional_float(data["cosine"]), optional_float(data["relative_error"]),
                   Verdict.from_advice_text(json_str(data["verdict"])),
                   tuple(optional_float(draw) for draw in json_list(data.get("draws") or [])))


@dataclass(frozen=True)
class AdviceRow:
    target: str  # FILE::FACTORY
    algorithm: str  # braintrace's name: d_rtrl, pp_prop, ...
    options: JsonObject  # the options the learner was built with
    compiles: bool
    runs: bool
    error: str | None  # the first error, in the modeller's words
    trace_bytes: int | None  # at ``batch``
    trace_bytes_law: Law | None
    xla_temp_bytes: int | None  # of one jitted online step at ``measured_batch``
    flops_ratio: float | None  # one online step / one forward step
    zero_gradient_weights: tuple[str, ...] = ()
    weights: tuple[WeightFidelity, ...] = ()
    batch: int | None = None  # the batch the trace bytes are given at (None: unbatched)
    measured_batch: int | None = None  # the batch the steps were compiled and run at
    steps: int = 0
    hidden_groups: int | None = None
    note: str = ""  # why an option has its value
    recommended: bool = False

    @property
    def label(self) -> str:
        return f"{self.algorithm}:multi-step" if self.options.get("vjp_method") == "multi-step" else self.algorithm

    def to_json(self) -> JsonObject:
        unmeasured: JsonObject = {"c0": None, "c1": None, "c2": None}
        law = self.trace_bytes_law.to_json() if self.trace_bytes_law else unmeasured
        return {
            "target": self.target, "algorithm": self.algorithm, "options": dict(self.options),
            "compiles": self.compiles, "runs": self.runs, "error": self.error,
            "trace_bytes": self.trace_bytes, "trace_bytes_law": law,
            "xla_temp_bytes": self.xla_temp_bytes, "flops_ratio": self.flops_ratio,
            "zero_gradient_weights": [weight for weight in self.zero_gradient_weights],
            "weights": [weight.to_json() for weight in self.weights],
            "batch": self.batch, "measured_batch": self.measured_batch, "steps": self.steps,
            "hidden_groups": self.hidden_groups, "note": self.note, "recommended": self.recommended,
        }

    @classmethod
    def from_json(cls, data: JsonObject) -> "AdviceRow":
        law = json_object(data.get("trace_bytes_law") or {})
        return cls(
            json_str(data["target"]), json_str(data["algorithm"]), dict(json_object(data.get("options") or {})),
            bool(data["compiles"]), bool(data["runs"]), optional_str(data.get("error")),
            optional_int(data.get("trace_bytes")),
            Law(json_int(law["c0"]), json_int(law["c1"]), json_int(law["c2"])) if law.get("c0") is not None else None,
            optional_int(data.get("xla_temp_bytes")), optional_float(data.get("flops_ratio")),
            tuple(json_strs(data.get("zero_gradient_weights"))),
            tuple(WeightFidelity.from_json(w) for w in json_objects(data.get("weights"))),
            optional_int(data.get("batch")), optional_int(data.get("measured_batch")),
            json_int(data.get("steps") or 0), optional_int(data.get("hidden_groups")),
            json_str(data.get("note") or ""), bool(data.get("recommended")))

    def weights_with(self, verdict: Verdict) -> tuple[str, ...]:
        """The weight leaves of one verdict, by name."""
        return tuple(w.weight for w in self.weights if w.verdict == verdict)

    @property
    def exact(self) -> bool:
        compared = [w for w in self.weights if w.verdict is not Verdict.VACUOUS]
        return bool(compared) and all(w.verdict is Verdict.EXACT for w in compared)

    @property
    def closeness(self) -> float:
        """How close to BPTT, larger is closer: the mean cosine over the weight leaves compared, a leaf
        without online gradient counting as 0 and a non-finite one as -1."""
        compared = [w for w in self.weights if w.verdict is not Verdict.VACUOUS]
        cosines = [0.0 if w.verdict is Verdict.NOT_LEARNING else (w.cosine if w.cosine is not None else -1.0)
                   for w in compared]
        return round(sum(cosines) / len(cosines), 6) if cosines else -1.0


def advice_json(rows: list[AdviceRow]) -> JsonObject:
    return {"advice": [row.to_json() for row in rows]}
