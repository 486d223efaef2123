"""What one gradient check runs with: defaults, then the target's own options,
then ``[tool.etrace-lint.verify]``, then the command line.

pyproject.toml and the command line both arrive as fields of the run's
settings (``verify_steps``, ``verify_batch``, ``verify_algorithms``,
``verify_seed``, ``verify_cosine_floor``, ``device``), the command line
having already overridden the file. A target's options come from
``@etrace_lint.target(verify={...})``:

``steps``, ``batch``, ``seed``, ``algorithms``, ``cosine_floor``
    as on the command line; ``batch`` is the batch the check draws its
    inputs with: unset, a model given batched keeps its own batch and one
    given unbatched is checked at a batch of 4 when it initialises batched
    (see ``layout.py``);
``loss``
    ``loss(output) -> scalar``, the loss of one step (default: the mean
    squared output);
``inputs``
    ``inputs(steps, batch, seed) -> array or tuple of arrays`` with a leading
    time axis (default: normal noise shaped like the example inputs);
``tolerances``
    a number, or ``{"float32": 1e-5, "float64": 1e-10}``: the largest
    relative error an exact gradient may show;
``algorithm_options``
    ``{"pp_prop": {"decay_or_rank": 0.9}}``: passed to ``braintrace.compile``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:  # annotations only
    from ..config.settings import EngineSettings

# the loss of one step: the model's output (a pytree) -> a scalar
Loss: TypeAlias = Callable[[object], object]
# ``inputs(steps, batch, seed)``: a sequence of inputs, its leading axis the steps
InputsCallable: TypeAlias = Callable[[int, "int | None", int], object]

DEFAULT_ALGORITHMS = ("d_rtrl", "pp_prop")
DEFAULT_TOLERANCES = {"float16": 1e-2, "bfloat16": 1e-2, "float32": 1e-5, "float64": 1e-10}
# braintrace's pp_prop (and its aliases es_d_rtrl and esd_rtrl, core/algorithms.ALIASES) has no default decay
DEFAULT_ALGORITHM_OPTIONS = {name: {"decay_or_rank": 0.9} for name in ("pp_prop", "es_d_rtrl", "esd_rtrl")}
TARGET_KEYS = ("steps", "batch", "seed", "algorithms", "cosine_floor", "loss", "inputs",
               "tolerances", "algorithm_options")


class VerifySettingsError(ValueError):
    """Options the check cannot run with; reported as a finding about the target."""


@dataclass(frozen=True)
class VerifySettings:
    steps: int = 16
    batch: int | None = None  # unset: the target's own batch, or 4 (layout.py)
    seed: int = 0
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS
    cosine_floor: float = 0.5
    tolerances: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_TOLERANCES))
    loss: Loss | None = None
    inputs: InputsCallable | None = None
    # algorithm -> the keyword arguments its learner is built with
    algorithm_options: dict[str, dict[str, object]] = field(
        default_factory=lambda: {k: dict(v) for k, v in DEFAULT_ALGORITHM_OPTIONS.items()})
    device: str = ""  # a JAX platform name; empty: JAX's default device

    def tolerance(self, dtype_name: str) -> float:
        return float(self.tolerances.get(dtype_name, self.tolerances.get("float32", 1e-5)))

    def options_for(self, algorithm: str) -> dict[str, object]:
        return dict(self.algorithm_options.get(algorithm, {}))


# algorithms whose VJP is multi-step unless told otherwise (braintrace's UORO and DNI)
_MULTI_STEP_BY_DEFAULT = ("uoro", "dni")


def trains_single_step(target_options: Mapping[str, object] | None) -> bool:
    """Whether any algorithm a target says it trains with (``verify={"algorithms": ..., "algorithm_options":
    ...}``, else the defaults) takes a single-step VJP: the static rules that say a single-step learning signal
    is zero hold then. Options the check cannot read count as the default, single-step."""
    try:
        settings = resolve_settings({key: value for key, value in (target_options or {}).items()
                                     if key.replace("-", "_") in ("algorithms", "algorithm_options")})
    except VerifySettingsError:
        return True
    default = {name: "multi-step" for name in _MULTI_STEP_BY_DEFAULT}
    return any(settings.options_for(name).get("vjp_method", default.get(name, "single-step")) != "multi-step"
               for name in settings.algorithms)


def declared_algorithms(target_options: Mapping[str, object] | None) -> tuple[str, ...]:
    """The algorithms a target says it trains with (``verify={"algorithms": [...]}``); none when it names none
    (the static checks then stand for D-RTRL, braintrace's default) or names them in a form the check cannot read."""
    named = (target_options or {}).get("algorithms")
    if named is None:
        return ()
    try:
        return _algorithms(named)
    except VerifySettingsError:
        return ()


def _positive_int(value: object, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise VerifySettingsError(f"verify option {key!r} must be a positive integer, not {value!r}")
    return value


def _algorithms(value: object) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items or not all(isinstance(a, str) for a in items):
        raise VerifySettingsError(f"verify option 'algorithms' must name at least one algorithm, not {value!r}")
    names: list[str] = []
    for item in items:
        names.extend(a.strip().lower() for a in str(item).split(",") if a.strip())
    return tuple(dict.fromkeys(names))


def _tolerances(value: object) -> dict[str, float]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {name: float(value) for name in DEFAULT_TOLERANCES}
    if isinstance(value, dict) and all(isinstance(v, (int, float)) for v in value.values()):
        return {**DEFAULT_TOLERANCES, **{str(k): float(v) for k, v in value.items()}}
    raise VerifySettingsError(f"verify option 'tolerances' must be a number or a dtype -> number table, not {value!r}")


def _apply(settings: VerifySettings, key: str, value: object) -> VerifySettings:
    """``settings`` with option ``key`` set to ``value``, checked."""
    if key == "steps":
        return replace(settings, steps=_positive_int(value, key))
    if key == "batch":
        return replace(settings, batch=_positive_int(value, key))
    if key == "seed":
        if isinstance(value, bool) or not isinstance(value, int):
            raise VerifySettingsError(f"verify option 'seed' must be an integer, not {value!r}")
        return replace(settings, seed=value)
    if key == "algorithms":
        return replace(settings, algorithms=_algorithms(value))
    if key == "cosine_floor":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not -1.0 <= value <= 1.0:
            raise VerifySettingsError(f"verify option 'cosine_floor' must be a number in [-1, 1], not {value!r}")
        return replace(settings, cosine_floor=float(value))
    if key in ("loss", "inputs"):
        if not callable(value):
            raise VerifySettingsError(f"verify option {key!r} must be callable, not {type(value).__name__}")
        return replace(settings, loss=value) if key == "loss" else replace(settings, inputs=value)
    if key == "tolerances":
        return replace(settings, tolerances=_tolerances(value))
    if key == "algorithm_options":
        if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
            raise VerifySettingsError("verify option 'algorithm_options' must map algorithm names to dicts")
        merged: dict[str, dict[str, object]] = {k: dict(v) for k, v in DEFAULT_ALGORITHM_OPTIONS.items()}
        for name, options in value.items():
            merged[str(name).lower()] = {**merged.get(str(name).lower(), {}), **options}
        return replace(settings, algorithm_options=merged)
    if key == "device":
        if not isinstance(value, str):
            raise VerifySettingsError(f"--device must name a JAX platform, not {value!r}")
        return replace(settings, device=value.strip().lower())
    return settings


def _run_values(run: EngineSettings) -> dict[str, object]:
    """The run's settings, under the names a target's options use."""
    return {"steps": run.verify_steps, "batch": run.verify_batch, "algorithms": run.verify_algorithms,
            "seed": run.verify_seed, "cosine_floor": run.verify_cosine_floor, "device": run.device}


def resolve_settings(target_options: Mapping[str, object] | None,
                     run: EngineSettings | None = None) -> VerifySettings:
    """Layer the target's options and the run's settings over the defaults."""
    settings = VerifySettings()
    for key, value in (target_options or {}).items():
        key = key.replace("-", "_")
        if key not in TARGET_KEYS:
            raise VerifySettingsError(f"unknown verify option {key!r} (known: {', '.join(TARGET_KEYS)})")
        settings = _apply(settings, key, value)
    for key, value in (_run_values(run) if run is not None else {}).items():
        if value is not None and value != "":
            settings = _apply(settings, key, value)
    return settings
