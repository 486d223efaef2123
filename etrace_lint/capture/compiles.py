"""What replaces the program's compiles, and the :class:`~.handover.Capture` each compile makes.

Imports braintrace, brainstate and JAX at its top: :mod:`.hooks` imports it only once the program has
imported braintrace, so the program's own imports always come first.
"""

from __future__ import annotations

import functools
import inspect
import numbers
import sys
from collections.abc import Callable
from types import ModuleType
from typing import TypeAlias

import brainstate
import braintrace
import jax
from braintrace import _compile
from braintrace._input_data import get_single_step_data  # how compile_graph reads its inputs

from . import handover
from .handover import GRAPH_OPTIONS, Capture
from .site import CaptureSite, site_of_call

_COMPILE_KEYWORDS = ("batch_size", "seed", "verbose", "vmap")

# what braintrace.compile takes as its algorithm, and what it returns
Algorithm: TypeAlias = "str | braintrace.ETraceConfig | type[braintrace.ETraceAlgorithm]"
Learner: TypeAlias = "braintrace.ETraceAlgorithm | brainstate.nn.Vmap"


def patch(module: ModuleType) -> None:
    """Replace ``braintrace.compile`` and every ``compile_graph``, a user's later subclasses' too."""
    base = module.ETraceAlgorithm
    original_compile = module.compile
    handover.replace(module, "compile", _wrap_compile(original_compile))
    compile_module = sys.modules.get(getattr(original_compile, "__module__", "") or "")
    if compile_module is not None and getattr(compile_module, "compile", None) is original_compile:
        handover.replace(compile_module, "compile", module.compile)
    for cls in (base, *handover.subclasses(base)):
        if "compile_graph" in cls.__dict__:
            handover.replace(cls, "compile_graph", _wrap_compile_graph(cls.__dict__["compile_graph"]))
    original_init_subclass = base.__dict__.get("__init_subclass__")

    def __init_subclass__(cls: type, /, **kwargs: object) -> None:  # a user's own algorithm, defined later
        if original_init_subclass is not None:
            original_init_subclass.__get__(None, cls)(**kwargs)
        else:
            super(base, cls).__init_subclass__(**kwargs)
        if handover.installed() and "compile_graph" in cls.__dict__:
            handover.replace(cls, "compile_graph", _wrap_compile_graph(cls.__dict__["compile_graph"]))

    handover.replace(base, "__init_subclass__", classmethod(__init_subclass__))


def _wrap_compile(original: Callable[..., Learner]) -> Callable[..., Learner]:
    @functools.wraps(original)
    def compile(model: brainstate.nn.Module, algorithm: Algorithm, *example_inputs: object,
                **keywords: object) -> Learner:
        __tracebackhide__ = True  # pytest shows the program's frames, not this one
        state = handover.state
        if not handover.may_capture() or state.depth:
            return original(model, algorithm, *example_inputs, **keywords)
        site = site_of_call(_algorithm_label(algorithm), sys._getframe(1))
        state.depth += 1
        try:
            learner = original(model, algorithm, *example_inputs, **keywords)
        except Exception as exc:
            state.depth -= 1
            handover.hand_over(_from_compile(site, model, algorithm, example_inputs, keywords, None, exc))
            raise
        state.depth -= 1
        handover.hand_over(_from_compile(site, model, algorithm, example_inputs, keywords, learner, None))
        return learner

    return compile


def _wrap_compile_graph(original: Callable[..., object]) -> Callable[..., object]:
    @functools.wraps(original)
    def compile_graph(self: braintrace.ETraceAlgorithm, *args: object) -> object:
        __tracebackhide__ = True  # pytest shows the program's frames, not this one
        state = handover.state
        if not handover.may_capture() or state.depth or _in_vmap_probe():
            return original(self, *args)
        site = site_of_call(type(self).__name__, sys._getframe(1))
        state.depth += 1
        try:
            result = original(self, *args)
        except Exception as exc:
            state.depth -= 1
            handover.hand_over(_from_learner(site, self, args, exc))
            raise
        state.depth -= 1
        handover.hand_over(_from_learner(site, self, args, None))
        return result

    return compile_graph


def _in_vmap_probe() -> bool:
    probe = getattr(brainstate.transform, "in_new_state_probe", None)  # newer brainstate only
    return bool(probe is not None and probe())


def _algorithm_label(algorithm: Algorithm) -> str:
    if isinstance(algorithm, str):
        return algorithm
    if isinstance(algorithm, type):
        return algorithm.__name__
    factorization = getattr(algorithm, "trace_factorization", None)  # the program may pass anything
    if factorization is not None:
        return f"{type(algorithm).__name__}({factorization})"
    return type(algorithm).__name__


def _resolve_class(algorithm: Algorithm) -> type | None:
    if isinstance(algorithm, type):
        return algorithm
    try:
        resolved = _compile._resolve_algorithm(algorithm)  # the registry behind braintrace.compile's names
        return resolved if isinstance(resolved, type) else None
    except Exception:  # noqa: BLE001 - braintrace refused the name: the capture says so as its error
        return None


def _environ() -> dict[str, str]:
    try:
        return {str(key): str(value) for key, value in brainstate.environ.all().items()}
    except Exception:  # noqa: BLE001 - shown only; a brainstate without environ.all shows none
        return {}


def _one_step(example_inputs: tuple[object, ...]) -> tuple[object, ...]:
    """The inputs as the graph is built from them (SingleStepData/MultiStepData unwrapped)."""
    try:
        return tuple(get_single_step_data(*example_inputs))
    except Exception:  # noqa: BLE001 - the lint traces them as they are and says what fails
        return tuple(example_inputs)


def _first_of_batch(inputs: tuple[object, ...]) -> tuple[object, ...]:
    return tuple(jax.tree.map(lambda leaf: leaf[0] if getattr(leaf, "ndim", 0) else leaf, value) for value in inputs)


def _graph_options(executor: braintrace.ETraceGraphExecutor | None) -> dict[str, object]:
    if executor is None:
        return {}
    defaults = inspect.signature(braintrace.compile_etrace_graph).parameters
    options = {}
    for name in GRAPH_OPTIONS:
        if name in defaults and hasattr(executor, name):  # an option this braintrace's executor keeps
            value = getattr(executor, name)
            if value is not defaults[name].default:
                options[name] = value
    return options


def _single_step(executor: braintrace.ETraceGraphExecutor | None, options: dict[str, object]) -> bool:
    """Whether the learner's VJP is single-step: its graph executor says, else the options it was given."""
    said = getattr(executor, "is_single_step_vjp", None)  # a VJP executor's only
    if isinstance(said, bool):
        return said
    return bool(options.get("vjp_method", "single-step") != "multi-step")


def _batch_size(value: object) -> int | None:
    """braintrace.compile's batch size (a NumPy integer too), else None."""
    return int(value) if isinstance(value, numbers.Integral) else None


def _from_compile(site: CaptureSite, model: brainstate.nn.Module, algorithm: Algorithm,
                  example_inputs: tuple[object, ...], keywords: dict[str, object], learner: Learner | None,
                  error: BaseException | None) -> Capture:
    vmap = bool(keywords.get("vmap", False))
    options = {key: value for key, value in keywords.items() if key not in _COMPILE_KEYWORDS}
    inputs = _one_step(tuple(example_inputs))
    if vmap:
        inputs = _first_of_batch(inputs)
    inner = getattr(learner, "module", learner)  # an ETraceVmap wraps the unbatched learner
    executor = getattr(inner, "graph_executor", None)
    return Capture(site, model, inputs, None if vmap else _batch_size(keywords.get("batch_size")), vmap,
                   _resolve_class(algorithm), options, _graph_options(executor), _environ(), error,
                   single_step_vjp=_single_step(executor, options))


def _constructor_options(learner: braintrace.ETraceAlgorithm) -> dict[str, object]:
    """What a learner built by the user was constructed with, as far as its attributes say."""
    options: dict[str, object] = {}
    try:
        parameters = inspect.signature(type(learner).__init__).parameters
    except (TypeError, ValueError):
        return options
    for name, parameter in parameters.items():
        if name in ("self", "model", "name") or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        for attribute in (name, f"_{name}"):
            if attribute in vars(learner):
                options[name] = vars(learner)[attribute]
                break
    return options


def _from_learner(site: CaptureSite, learner: braintrace.ETraceAlgorithm, args: tuple[object, ...],
                  error: BaseException | None) -> Capture:
    # a learner whose __init__ failed half way may lack any of these
    executor = getattr(learner, "graph_executor", None)
    model = getattr(executor, "model", None) or getattr(learner, "model4compile", None) or getattr(learner, "model")
    options = _constructor_options(learner)
    return Capture(site, model, _one_step(args), None, False, type(learner), options, _graph_options(executor),
                   _environ(), error, f"{type(learner).__name__}.compile_graph", _single_step(executor, options))
