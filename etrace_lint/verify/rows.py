"""One row of ``--verify``: a weight leaf's online gradient against BPTT's, under one algorithm, over one
sequence length. Rows leave the worker as JSON (:meth:`VerifyRow.to_json`, the keys the json writer and
the summary table read), and so are cached with the target's result."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.json_types import JsonObject
from ..core.verdict import Verdict


@dataclass(frozen=True)
class VerifyRow:
    model: str
    algorithm: str
    steps: int
    weight: str  # the weight as the model's code names it
    weight_path: tuple[str | int, ...]
    leaf: str  # ``['bias']``, or "" for a weight that is one array
    expected: str  # "exact" or "approximation": what the algorithm promises for it
    reason: str  # why
    verdict: Verdict
    rel_error: float | None  # None: not measured (BPTT zero, or not finite)
    cosine: float | None
    scale: float | None  # online = scale x BPTT's, when it is a multiple of it
    online_norm: float | None
    bptt_norm: float | None
    tolerance: float
    cosine_floor: float
    device: str
    batch: int | None
    input_scale: float
    seconds: float
    bptt_seconds: float
    # a direction: the cosine on each input draw (None: not measured); None when it was measured once
    draws: tuple[float | None, ...] | None = None
    # a direction every draw in ``draws`` shows: its cosine on each further draw, from rest and from the states that
    # draw's first steps leave, measured until one is not against BPTT's (None: a draw that does not drive the leaf)
    more_draws: tuple[float | None, ...] = ()
    # a first step measured from the states this many steps of the inputs leave, where from rest it drives nothing
    # (0: from rest)
    warmup: int = 0

    @property
    def exact_expected(self) -> bool:
        return self.expected == "exact"

    def to_json(self) -> JsonObject:
        shown: JsonObject = {
            "model": self.model, "algorithm": self.algorithm, "steps": self.steps, "weight": self.weight,
            "weightPath": list(self.weight_path), "leaf": self.leaf, "expected": self.expected,
            "reason": self.reason, "verdict": self.verdict.value, "relError": self.rel_error,
            "cosine": self.cosine, "scale": self.scale, "onlineNorm": self.online_norm,
            "bpttNorm": self.bptt_norm, "tolerance": self.tolerance, "cosineFloor": self.cosine_floor,
            "device": self.device, "batch": self.batch, "inputScale": self.input_scale,
            "seconds": self.seconds, "bpttSeconds": self.bptt_seconds,
        }
        if self.draws is not None:
            shown["draws"] = list(self.draws)
        if self.more_draws:
            shown["moreDraws"] = list(self.more_draws)
        if self.warmup:
            shown["warmupSteps"] = self.warmup
        return shown
