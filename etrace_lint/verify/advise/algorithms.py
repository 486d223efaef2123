"""The braintrace algorithms the advisor measures: each of :mod:`etrace_lint.core.algorithms` with the
options the advisor builds it with.

A name followed by ``:multi-step`` is the same algorithm with a multi-step VJP.
Only the algorithms the installed braintrace provides are offered.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import brainstate
import braintrace

from ...core.algorithms import ALIASES, CLASSES

# pp_prop (ES-D-RTRL) has no default decay: its docstring's example uses 0.9, and so does ``--verify``
PP_PROP_DECAY = 0.9
MULTI_STEP = "multi-step"
# which algorithms to measure: "all" or None for every one, else labels, comma-separated or listed
AlgorithmSpec = str | list[str] | tuple[str, ...] | None


@dataclass(frozen=True)
class Algorithm:
    name: str  # braintrace's registered name, e.g. "d_rtrl"
    class_name: str  # its class in the braintrace namespace
    options: dict[str, object] = field(default_factory=dict)  # what the advisor passes to the constructor
    note: str = ""  # why an option was chosen, shown beside the row

    @property
    def label(self) -> str:
        """Unique per row: the name, with ``:multi-step`` for the multi-step variant."""
        return f"{self.name}:{MULTI_STEP}" if self.options.get("vjp_method") == MULTI_STEP else self.name

    def constructor(self) -> type[braintrace.ETraceAlgorithm]:
        constructor: type[braintrace.ETraceAlgorithm] = getattr(braintrace, self.class_name)
        return constructor

    def build(self, model: brainstate.nn.Module) -> braintrace.ETraceAlgorithm:
        """The learner, not yet compiled."""
        # each class takes its own keyword arguments, which braintrace's ``compile`` types as ``**options: Any``
        options: dict[str, Any] = self.options
        return self.constructor()(model, **options)

    def compile(self, model: brainstate.nn.Module, inputs: tuple[object, ...], batch: int | None,
                seed: int | None = None) -> braintrace.ETraceAlgorithm | brainstate.nn.Vmap:
        """``braintrace.compile`` of this algorithm, its usual options and its checks: the model's states are
        initialised again at ``batch``, and a model it refuses raises as it does for a user."""
        options: dict[str, Any] = self.options
        return braintrace.compile(model, self.constructor(), *inputs, batch_size=batch, seed=seed, **options)


_PP_NOTE = (f"decay_or_rank={PP_PROP_DECAY}: pp_prop requires it and documents no default; "
            f"0.9 is the value of braintrace's own pp_prop example")

# the advisor's options for an algorithm, and why, where it does not take the constructor's defaults
_OPTIONS: dict[str, dict[str, object]] = {"pp_prop": {"decay_or_rank": PP_PROP_DECAY}}
_NOTES = {"pp_prop": _PP_NOTE, "snap": "n=2, SnAp's default", "uoro": "multi-step VJP, UORO's default",
          "dni": "multi-step VJP and no synthesizer attached, DNI's defaults"}
# (name, class, options, note), in the order the table shows them
_TABLE = tuple((name, class_name, _OPTIONS.get(name, {}), _NOTES.get(name, "")) for name, class_name in CLASSES.items())
# single-step algorithms whose multi-step VJP variant is offered too
_MULTI_STEP_OF = ("d_rtrl", "pp_prop")


class UnknownAlgorithm(ValueError):
    pass


def installed() -> list[Algorithm]:
    """Every algorithm of the table the installed braintrace provides, multi-step variants included."""
    found = []
    for name, class_name, options, note in _TABLE:
        if not hasattr(braintrace, class_name):
            continue
        found.append(Algorithm(name, class_name, dict(options), note))
        if name in _MULTI_STEP_OF:
            found.append(Algorithm(name, class_name, {**options, "vjp_method": MULTI_STEP}, note))
    return found


def select(spec: AlgorithmSpec, configured: Mapping[str, Mapping[str, object]] | None = None) -> list[Algorithm]:
    """``"all"`` / None: every installed one; else comma-separated labels (``d_rtrl,pp_prop:multi-step``).

    ``configured``: ``{label: options}`` that replace an algorithm's usual options (a target's own)."""
    available = {algorithm.label: algorithm for algorithm in installed()}
    if spec is None or spec == "all" or spec == ["all"]:
        chosen = list(available.values())
    else:
        items = [spec] if isinstance(spec, str) else list(spec)
        labels = [part.strip().lower() for item in items for part in str(item).split(",") if part.strip()]
        if "all" in labels:
            return select("all", configured)
        chosen = []
        for label in labels:
            name, _, variant = label.partition(":")
            label = ALIASES.get(name, name) + (f":{variant}" if variant else "")
            if label not in available:
                raise UnknownAlgorithm(f"unknown algorithm {label!r}; the installed braintrace offers "
                                       f"{', '.join(available)}")
            chosen.append(available[label])
    if configured:
        chosen = [Algorithm(a.name, a.class_name, {**a.options, **configured[a.label]}, "the target's options")
                  if a.label in configured else a for a in chosen]
    return _unique(chosen)


def _unique(chosen: list[Algorithm]) -> list[Algorithm]:
    seen, kept = set(), []
    for algorithm in chosen:
        if algorithm.label not in seen:
            seen.add(algorithm.label)
            kept.append(algorithm)
    return kept


def unknown_labels(labels: list[str]) -> list[str]:
    """The labels no braintrace algorithm of the table has, without importing braintrace (for the command
    line, before any worker starts); an algorithm the installed braintrace lacks is said by the run."""
    known = {name for name, *_ in _TABLE} | set(ALIASES) | {"all"}
    multi = set(_MULTI_STEP_OF) | {alias for alias, name in ALIASES.items() if name in _MULTI_STEP_OF}
    unknown = []
    for label in labels:
        name, _, variant = label.strip().lower().partition(":")
        if name not in known or (variant and (variant != MULTI_STEP or name not in multi)):
            unknown.append(label)
    return unknown


def known_labels() -> str:
    labels = []
    for name, *_ in _TABLE:
        labels.append(name)
        if name in _MULTI_STEP_OF:
            labels.append(f"{name}:{MULTI_STEP}")
    return ", ".join(labels)
