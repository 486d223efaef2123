"""Import a target's file and call its factory: the only place user code runs.

Whatever fails here is a tool error about that target (the model does not
exist yet), never a finding. Imports brainstate: it runs in a worker, as the engine does.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import os
import sys
from types import ModuleType

import brainstate

from ..analysis.braintrace_adapter import host_error_checks
from ..analysis.loaded_target import LoadedTarget
from ..config.environ import EnvironError, environ_context, how_to_set, target_environ, unset_key
from ..core.findings import Location, ToolError
from ..core.marker import TARGET_ATTRIBUTE
from ..core.positions import traceback_position
from ..core.wording import exception_line
from ..discovery.discover import TargetSpec
from ..running.isolation import search_path
from ..verify.settings import trains_single_step


class TargetLoadError(Exception):
    def __init__(self, tool_error: ToolError):
        super().__init__(tool_error.message)
        self.tool_error = tool_error


_MODULES: dict[str, ModuleType] = {}
_FAILED: dict[str, BaseException] = {}  # a file that did not import fails again without running twice


def forget_imported_files() -> None:
    """The next import of a model file runs it again (its modules were dropped)."""
    for module in _MODULES.values():
        sys.modules.pop(module.__name__, None)
    _MODULES.clear()
    _FAILED.clear()


def import_file(path: str, root: str | None = None) -> ModuleType:
    """Import a model file once per process under a name derived from its path."""
    if path in _MODULES:
        return _MODULES[path]
    if path in _FAILED:
        raise _FAILED[path]
    digest = hashlib.sha1(path.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    stem = "".join(c if c.isalnum() else "_" for c in os.path.splitext(os.path.basename(path))[0])
    module_name = f"_etrace_lint_target_{stem}_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        with search_path(path, root):
            spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(module_name, None)
        _FAILED[path] = exc
        raise
    _MODULES[path] = module
    return module


def _describe(exc: BaseException) -> str:
    if (key := unset_key(exc)) is not None:
        return f"KeyError: it reads brainstate.environ key {key!r}, which is not set; {how_to_set(key)}"
    return exception_line(exc)


def load_target(spec: TargetSpec, root: str | None = None, *, environ: dict[str, object] | None = None) -> LoadedTarget:
    """Import, find and call the factory; normalise what it returns."""
    where = Location(spec.path, spec.line)
    label = f"{os.path.basename(spec.path)}::{spec.factory}"
    try:
        module = import_file(spec.path, root)
    except SystemExit as exc:
        raise TargetLoadError(ToolError(spec.display_name, f"{label}: importing the file called sys.exit({exc.code})",
                                        where, "import-error")) from None
    except Exception as exc:
        raise TargetLoadError(ToolError(spec.display_name, f"{label}: the file does not import: {_describe(exc)}",
                                        _exception_location(exc, spec.path) or where, "import-error")) from None
    factory = getattr(module, spec.factory, None)  # the user's file may not define it
    if factory is None or not callable(factory):
        raise TargetLoadError(ToolError(spec.display_name, f"{label}: no function named {spec.factory!r} in the file",
                                        where, "no-factory"))
    options = dict(getattr(factory, TARGET_ATTRIBUTE, None) or {})
    name = options.get("name") or spec.display_name
    try:
        environ = target_environ(environ, options.get("environ"))
    except EnvironError as exc:
        raise TargetLoadError(ToolError(name, f"{label}: {exc}", where, "bad-environ")) from None
    try:
        # brainstate's checks of the initialisers' values compile nothing (analysis.braintrace_adapter.eager_checks)
        with search_path(spec.path, root), environ_context(environ), host_error_checks():
            produced = factory()
    except Exception as exc:
        raise TargetLoadError(ToolError(name, f"{label}: the factory raised {_describe(exc)}",
                                        _exception_location(exc, spec.path) or where, "factory-error")) from None
    model, inputs, extra = _unpack(produced, name, label, where)
    compile_options = dict(options.get("compile_options") or {})
    compile_options.update(extra)
    batch_size = compile_options.pop("batch_size", None) or options.get("batch_size")
    verify_options = dict(options.get("verify") or {})

    def rebuilt(seed: int) -> brainstate.nn.Module:
        # what the factory prints was shown when it first ran: not again for each draw of its weights
        with (search_path(spec.path, root), environ_context(environ), host_error_checks(),
              brainstate.random.seed_context(seed), contextlib.redirect_stdout(io.StringIO()),
              contextlib.redirect_stderr(io.StringIO())):
            return _unpack(factory(), name, label, where)[0]

    return LoadedTarget(spec, name, model, inputs, compile_options, batch_size, verify_options, environ,
                        factory_location=where, single_step_vjp=trains_single_step(verify_options), rebuilt=rebuilt)


def _unpack(produced: object, name: str, label: str, where: Location
            ) -> tuple[brainstate.nn.Module, tuple[object, ...], dict[str, object]]:
    def bad(why: str) -> TargetLoadError:
        return TargetLoadError(ToolError(
            name, f"{label}: the factory must return (model, example_inputs) or "
                  f"(model, example_inputs, compile_options); {why}", where, "bad-return"))

    if not isinstance(produced, tuple) or len(produced) not in (2, 3):
        raise bad(f"it returned {type(produced).__name__}"
                  + (f" of length {len(produced)}" if isinstance(produced, tuple) else ""))
    model, inputs = produced[0], produced[1]
    extra = produced[2] if len(produced) == 3 else {}
    if not isinstance(model, brainstate.nn.Module):
        raise bad(f"the model is a {type(model).__name__}, not a brainstate.nn.Module")
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    if not isinstance(extra, dict):
        raise bad(f"compile_options is a {type(extra).__name__}, not a dict")
    return model, inputs, dict(extra)


def _exception_location(exc: BaseException, path: str) -> Location | None:
    """The deepest line of ``path`` on the exception's traceback (or its syntax error)."""
    if isinstance(exc, SyntaxError) and exc.filename and os.path.abspath(exc.filename) == path:
        return Location(path, exc.lineno or 1, exc.offset or 1)
    best = None
    tb = exc.__traceback__
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == path:
            best = Location(path, *traceback_position(tb))
        tb = tb.tb_next
    return best
