"""The capture points: ``braintrace.compile`` and ``compile_graph`` of every ``ETraceAlgorithm``.

:func:`install` patches braintrace once the program imports it (at once when it already has), and
:func:`uninstall` puts every patched function back. Each compile the program makes is first done
exactly as without etrace-lint; then the :class:`Capture` (the model, its example inputs, the batch
or vmap, the algorithm and its options, the call site) goes to the handler, which lints it. A compile
inside another one (``braintrace.compile`` calls ``compile_graph``), inside the handler's own lint,
or in another process forked from the program is not captured again.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import inspect
import os
import sys
import threading
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Iterator, Sequence

from .site import CaptureSite, site_of_call

# the graph options of braintrace.compile_etrace_graph that a learner's graph executor carries
GRAPH_OPTIONS = ("include_recurrent_mixing", "sparse_n", "snap_max_jacobian_elements", "control_flow")
_COMPILE_KEYWORDS = ("batch_size", "seed", "verbose", "vmap")


@dataclass
class Capture:
    """One compile the program made, as the lint needs it."""

    site: CaptureSite
    model: Any
    inputs: tuple[Any, ...]  # one step's example inputs, as the learner's graph was built from them
    batch_size: int | None
    vmap: bool
    algorithm_class: type | None  # the learner's class, when known
    algorithm_options: dict[str, Any] = field(default_factory=dict)  # what the learner was built with
    graph_options: dict[str, Any] = field(default_factory=dict)  # keywords of braintrace.compile_etrace_graph
    environ: dict[str, str] = field(default_factory=dict)  # brainstate.environ in force at the call, shown
    error: BaseException | None = None  # what braintrace raised instead of compiling
    entry: str = "braintrace.compile"  # the entry point the program called
    single_step_vjp: bool = True  # the learner reads each step's learning signal (braintrace's default VJP)


Handler = Callable[[Capture], None]


class _State(threading.local):
    depth = 0  # compiles under way in this thread: only the outermost is captured
    linting = False  # the handler is linting: its own compiles are not the program's


_state = _State()
_installed: dict[str, Any] = {"handler": None, "pid": None, "patched": [], "finder": None}


def install(handler: Handler) -> None:
    """Capture every later compile of this process with ``handler``."""
    uninstall()
    _installed.update(handler=handler, pid=os.getpid())
    module = sys.modules.get("braintrace")
    if module is not None and hasattr(module, "ETraceAlgorithm"):
        _patch(module)
    else:
        finder = _PatchOnImport()
        _installed["finder"] = finder
        sys.meta_path.insert(0, finder)


def uninstall() -> None:
    """Put back every function :func:`install` replaced."""
    finder = _installed.get("finder")
    if finder is not None and finder in sys.meta_path:
        sys.meta_path.remove(finder)
    for owner, name, original in reversed(_installed["patched"]):
        if original is None:
            try:
                delattr(owner, name)
            except AttributeError:
                pass
        else:
            setattr(owner, name, original)
    _installed.update(handler=None, pid=None, patched=[], finder=None)


def installed() -> bool:
    return _installed["handler"] is not None


class linting:
    """While the handler lints: compiles are the lint's own, never captured."""

    def __enter__(self) -> None:
        self._was = _state.linting
        _state.linting = True

    def __exit__(self, *exc: object) -> None:
        _state.linting = self._was


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Patches braintrace right after the program imports it."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "braintrace":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                loader = spec.loader
                original = loader.exec_module

                def exec_module(module: ModuleType) -> None:
                    original(module)
                    if installed() and not _installed["patched"]:
                        _patch(module)

                spec.loader = _LoaderProxy(loader, exec_module)
                return spec
            if spec is not None:
                return spec
        return None


class _LoaderProxy(importlib.abc.Loader):
    def __init__(self, loader: Any, exec_module: Callable[[ModuleType], None]):
        self._loader = loader
        self._exec_module = exec_module

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        self._exec_module(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


def _set(owner: Any, name: str, value: Any) -> None:
    _installed["patched"].append((owner, name, owner.__dict__.get(name) if isinstance(owner, type) else
                                  getattr(owner, name, None)))
    setattr(owner, name, value)


def _subclasses(cls: type) -> Iterator[type]:
    sub: type
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _patch(braintrace: ModuleType) -> None:
    base = braintrace.ETraceAlgorithm
    original_compile = braintrace.compile
    _set(braintrace, "compile", _wrap_compile(original_compile))
    compile_module = sys.modules.get(getattr(original_compile, "__module__", "") or "")
    if compile_module is not None and getattr(compile_module, "compile", None) is original_compile:
        _set(compile_module, "compile", braintrace.compile)
    for cls in (base, *_subclasses(base)):
        if "compile_graph" in cls.__dict__:
            _set(cls, "compile_graph", _wrap_compile_graph(cls.__dict__["compile_graph"]))
    original_init_subclass = base.__dict__.get("__init_subclass__")

    def __init_subclass__(cls: type, /, **kwargs: Any) -> None:  # a user's own algorithm, defined later
        if original_init_subclass is not None:
            original_init_subclass.__get__(None, cls)(**kwargs)
        else:
            super(base, cls).__init_subclass__(**kwargs)
        if installed() and "compile_graph" in cls.__dict__:
            _set(cls, "compile_graph", _wrap_compile_graph(cls.__dict__["compile_graph"]))

    _set(base, "__init_subclass__", classmethod(__init_subclass__))


def _ours() -> bool:
    """Whether this call may be captured: installed, in the program's own process, not in a lint."""
    return installed() and _installed["pid"] == os.getpid() and not _state.linting


def _wrap_compile(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def compile(model: Any, algorithm: Any, *example_inputs: Any, **keywords: Any) -> Any:
        __tracebackhide__ = True  # pytest shows the program's frames, not this one
        if not _ours() or _state.depth:
            return original(model, algorithm, *example_inputs, **keywords)
        site = site_of_call(_algorithm_label(algorithm), sys._getframe(1))
        _state.depth += 1
        try:
            learner = original(model, algorithm, *example_inputs, **keywords)
        except Exception as exc:
            _state.depth -= 1
            _hand_over(_from_compile(site, model, algorithm, example_inputs, keywords, None, exc))
            raise
        _state.depth -= 1
        _hand_over(_from_compile(site, model, algorithm, example_inputs, keywords, learner, None))
        return learner

    return compile


def _wrap_compile_graph(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def compile_graph(self: Any, *args: Any) -> Any:
        __tracebackhide__ = True  # pytest shows the program's frames, not this one
        if not _ours() or _state.depth or _in_vmap_probe():
            return original(self, *args)
        site = site_of_call(type(self).__name__, sys._getframe(1))
        _state.depth += 1
        try:
            result = original(self, *args)
        except Exception as exc:
            _state.depth -= 1
            _hand_over(_from_learner(site, self, args, exc))
            raise
        _state.depth -= 1
        _hand_over(_from_learner(site, self, args, None))
        return result

    return compile_graph


def _hand_over(capture: Capture | None) -> None:
    """The capture to the handler; whatever goes wrong there is etrace-lint's, never the program's."""
    handler = _installed["handler"]
    if capture is None or handler is None:
        return
    with linting():
        try:
            handler(capture)
        except Exception as exc:  # noqa: BLE001 - the program goes on as without etrace-lint
            print(f"etrace-lint: error: linting {capture.site.display_name} failed: {type(exc).__name__}: {exc}",
                  file=sys.stderr)


def _in_vmap_probe() -> bool:
    import brainstate  # the program imported braintrace, so brainstate too

    probe = getattr(brainstate.transform, "in_new_state_probe", None)
    return bool(probe is not None and probe())


def _algorithm_label(algorithm: Any) -> str:
    if isinstance(algorithm, str):
        return algorithm
    if isinstance(algorithm, type):
        return algorithm.__name__
    factorization = getattr(algorithm, "trace_factorization", None)
    if factorization is not None:
        return f"{type(algorithm).__name__}({factorization})"
    return type(algorithm).__name__


def _resolve_class(algorithm: Any) -> type | None:
    if isinstance(algorithm, type):
        return algorithm
    try:
        from braintrace import _compile  # the registry behind braintrace.compile's names and configs
        resolved = _compile._resolve_algorithm(algorithm)
        return resolved if isinstance(resolved, type) else None
    except Exception:  # noqa: BLE001 - braintrace refused the name: the capture says so as its error
        return None


def _environ() -> dict[str, str]:
    try:
        import brainstate  # the program's own import comes first
        return {str(key): str(value) for key, value in brainstate.environ.all().items()}
    except Exception:  # noqa: BLE001 - shown only; a brainstate without environ.all shows none
        return {}


def _one_step(example_inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """The inputs as the graph is built from them (SingleStepData/MultiStepData unwrapped)."""
    try:
        from braintrace._input_data import get_single_step_data  # how compile_graph reads its inputs
    except ImportError:
        return tuple(example_inputs)
    try:
        return tuple(get_single_step_data(*example_inputs))
    except Exception:  # noqa: BLE001 - the lint traces them as they are and says what fails
        return tuple(example_inputs)


def _first_of_batch(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    import jax  # the program's own import comes first

    return tuple(jax.tree.map(lambda leaf: leaf[0] if getattr(leaf, "ndim", 0) else leaf, value) for value in inputs)


def _graph_options(executor: Any) -> dict[str, Any]:
    if executor is None:
        return {}
    import braintrace  # the program's own import comes first

    defaults = inspect.signature(braintrace.compile_etrace_graph).parameters
    options = {}
    for name in GRAPH_OPTIONS:
        if name in defaults and hasattr(executor, name):
            value = getattr(executor, name)
            if value is not defaults[name].default:
                options[name] = value
    return options


def _single_step(executor: Any, options: dict[str, Any]) -> bool:
    """Whether the learner's VJP is single-step: its graph executor says, else the options it was given."""
    said = getattr(executor, "is_single_step_vjp", None)
    if isinstance(said, bool):
        return said
    return bool(options.get("vjp_method", "single-step") != "multi-step")


def _from_compile(site: CaptureSite, model: Any, algorithm: Any, example_inputs: tuple[Any, ...],
                  keywords: dict[str, Any], learner: Any, error: BaseException | None) -> Capture:
    vmap = bool(keywords.get("vmap", False))
    options = {key: value for key, value in keywords.items() if key not in _COMPILE_KEYWORDS}
    inputs = _one_step(tuple(example_inputs))
    if vmap:
        inputs = _first_of_batch(inputs)
    inner = getattr(learner, "module", learner)  # an ETraceVmap wraps the unbatched learner
    executor = getattr(inner, "graph_executor", None)
    return Capture(site, model, inputs, None if vmap else keywords.get("batch_size"), vmap,
                   _resolve_class(algorithm), options, _graph_options(executor), _environ(), error,
                   single_step_vjp=_single_step(executor, options))


def _constructor_options(learner: Any) -> dict[str, Any]:
    """What a learner built by the user was constructed with, as far as its attributes say."""
    options: dict[str, Any] = {}
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


def _from_learner(site: CaptureSite, learner: Any, args: tuple[Any, ...], error: BaseException | None) -> Capture:
    executor = getattr(learner, "graph_executor", None)
    model = getattr(executor, "model", None) or getattr(learner, "model4compile", None) or getattr(learner, "model")
    options = _constructor_options(learner)
    return Capture(site, model, _one_step(args), None, False, type(learner), options, _graph_options(executor),
                   _environ(), error, f"{type(learner).__name__}.compile_graph", _single_step(executor, options))
