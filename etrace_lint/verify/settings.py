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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # annotations only
    from ..config.settings import EngineSettings

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
    loss: Callable[..., Any] | None = None
    inputs: Callable[..., Any] | None = None
    algorithm_options: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {k: dict(v) for k, v in DEFAULT_ALGORITHM_OPTIONS.items()})
    device: str = ""  # a JAX platform name; empty: JAX's default device

    def tolerance(self, dtype_name: str) -> float:
        return float(self.tolerances.get(dtype_name, self.tolerances.get("float32", 1e-5)))

    def options_for(self, algorithm: str) -> dict[str, Any]:
        return dict(self.algorithm_options.get(algorithm, {}))


# algorithms whose VJP is multi-step unless told otherwise (braintrace's UORO and DNI)
_MULTI_STEP_BY_DEFAULT = ("uoro", "dni")


def trains_single_step(target_options: dict[str, Any] | None) -> bool:
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


def _positive_int(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise VerifySettingsError(f"verify option {key!r} must be a positive integer, not {value!r}")
    return value


def _algorithms(value: Any) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items or not all(isinstance(a, str) for a in items):
        raise VerifySettingsError(f"verify option 'algorithms' must name at least one algorithm, not {value!r}")
    names: list[str] = []
    for item in items:
        names.extend(a.strip().lower() for a in item.split(",") if a.strip())
    return tuple(dict.fromkeys(names))


def _tolerances(value: Any) -> dict[str, float]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {name: float(value) for name in DEFAULT_TOLERANCES}
    if isinstance(value, dict) and all(isinstance(v, (int, float)) for v in value.values()):
        return {**DEFAULT_TOLERANCES, **{str(k): float(v) for k, v in value.items()}}
    raise VerifySettingsError(f"verify option 'tolerances' must be a number or a dtype -> number table, not {value!r}")


def _apply(values: dict[str, Any], key: str, value: Any) -> None:
    if key in ("steps", "batch"):
        values[key] = _positive_int(value, key)
    elif key == "seed":
        if isinstance(value, bool) or not isinstance(value, int):
            raise VerifySettingsError(f"verify option 'seed' must be an integer, not {value!r}")
        values[key] = value
    elif key == "algorithms":
        values[key] = _algorithms(value)
    elif key == "cosine_floor":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not -1.0 <= value <= 1.0:
            raise VerifySettingsError(f"verify option 'cosine_floor' must be a number in [-1, 1], not {value!r}")
        values[key] = float(value)
    elif key in ("loss", "inputs"):
        if not callable(value):
            raise VerifySettingsError(f"verify option {key!r} must be callable, not {type(value).__name__}")
        values[key] = value
    elif key == "tolerances":
        values[key] = _tolerances(value)
    elif key == "algorithm_options":
        if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
            raise VerifySettingsError("verify option 'algorithm_options' must map algorithm names to dicts")
        merged = {k: dict(v) for k, v in DEFAULT_ALGORITHM_OPTIONS.items()}
        for name, options in value.items():
            merged[str(name).lower()] = {**merged.get(str(name).lower(), {}), **options}
        values[key] = merged
    elif key == "device":
        if not isinstance(value, str):
            raise VerifySettingsError(f"--device must name a JAX platform, not {value!r}")
        values[key] = value.strip().lower()


def _run_values(run: EngineSettings) -> dict[str, Any]:
    """The run's settings, under the names a target's options use."""
    return {"steps": run.verify_steps, "batch": run.verify_batch, "algorithms": run.verify_algorithms,
            "seed": run.verify_seed, "cosine_floor": run.verify_cosine_floor, "device": run.device}


def resolve_settings(target_options: dict[str, Any] | None, run: EngineSettings | None = None) -> VerifySettings:
    """Layer the target's options and the run's settings over the defaults."""
    values: dict[str, Any] = {}
    for key, value in (target_options or {}).items():
        key = key.replace("-", "_")
        if key not in TARGET_KEYS:
            raise VerifySettingsError(f"unknown verify option {key!r} (known: {', '.join(TARGET_KEYS)})")
        _apply(values, key, value)
    for key, value in (_run_values(run) if run is not None else {}).items():
        if value is not None and value != "":
            _apply(values, key, value)
    return VerifySettings(**values)
