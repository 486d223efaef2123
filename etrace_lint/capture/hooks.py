"""The capture points: ``braintrace.compile`` and ``compile_graph`` of every ``ETraceAlgorithm``.

:func:`install` patches braintrace once the program imports it (at once when it already has), and
:func:`uninstall` puts every patched function back. Each compile the program makes is first done
exactly as without etrace-lint; then the :class:`Capture` (the model, its example inputs, the batch
or vmap, the algorithm and its options, the call site) goes to the handler, which lints it. A compile
inside another one (``braintrace.compile`` calls ``compile_graph``), inside the handler's own lint,
or in another process forked from the program is not captured again.

This module imports no JAX, brainstate or braintrace: what replaces the compiles is in
:mod:`.compiles`, imported once the program has imported braintrace.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING

from .site import CaptureSite

if TYPE_CHECKING:
    import brainstate

# the graph options of braintrace.compile_etrace_graph that a learner's graph executor carries
GRAPH_OPTIONS = ("include_recurrent_mixing", "sparse_n", "snap_max_jacobian_elements", "control_flow")


@dataclass
class Capture:
    """One compile the program made, as the lint needs it."""

    site: CaptureSite
    model: brainstate.nn.Module
    inputs: tuple[object, ...]  # one step's example inputs, as the learner's graph was built from them
    batch_size: int | None
    vmap: bool
    algorithm_class: type | None  # the learner's class, when known
    algorithm_options: dict[str, object] = field(default_factory=dict)  # what the learner was built with
    graph_options: dict[str, object] = field(default_factory=dict)  # keywords of braintrace.compile_etrace_graph
    environ: dict[str, str] = field(default_factory=dict)  # brainstate.environ in force at the call, shown
    error: BaseException | None = None  # what braintrace raised instead of compiling
    entry: str = "braintrace.compile"  # the entry point the program called
    single_step_vjp: bool = True  # the learner reads each step's learning signal (braintrace's default VJP)


Handler = Callable[[Capture], None]


class _State(threading.local):
    depth = 0  # compiles under way in this thread: only the outermost is captured
    linting = False  # the handler is linting: its own compiles are not the program's


@dataclass
class _Installed:
    """What :func:`install` set up, and what :func:`uninstall` puts back."""

    handler: Handler | None = None
    pid: int | None = None
    patched: list[tuple[object, str, object]] = field(default_factory=list)  # (owner, name, original)
    finder: _PatchOnImport | None = None


state = _State()
_installed = _Installed()


def install(handler: Handler) -> None:
    """Capture every later compile of this process with ``handler``."""
    uninstall()
    _installed.handler = handler
    _installed.pid = os.getpid()
    module = sys.modules.get("braintrace")
    if module is not None and hasattr(module, "ETraceAlgorithm"):  # braintrace may be half imported
        _patch(module)
    else:
        finder = _PatchOnImport()
        _installed.finder = finder
        sys.meta_path.insert(0, finder)


def uninstall() -> None:
    """Put back every function :func:`install` replaced."""
    finder = _installed.finder
    if finder is not None and finder in sys.meta_path:
        sys.meta_path.remove(finder)
    for owner, name, original in reversed(_installed.patched):
        if original is None:
            try:
                delattr(owner, name)
            except AttributeError:
                pass
        else:
            setattr(owner, name, original)
    _installed.handler = None
    _installed.pid = None
    _installed.patched = []
    _installed.finder = None


def installed() -> bool:
    return _installed.handler is not None


class linting:
    """While the handler lints: compiles are the lint's own, never captured."""

    def __enter__(self) -> None:
        self._was = state.linting
        state.linting = True

    def __exit__(self, *exc: object) -> None:
        state.linting = self._was


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Patches braintrace right after the program imports it."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "braintrace":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):  # another library's finder
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                loader = spec.loader
                original = loader.exec_module

                def exec_module(module: ModuleType) -> None:
                    original(module)
                    if installed() and not _installed.patched:
                        _patch(module)

                spec.loader = _LoaderProxy(loader, exec_module)
                return spec
            if spec is not None:
                return spec
        return None


class _LoaderProxy(importlib.abc.Loader):
    def __init__(self, loader: importlib.abc.Loader, exec_module: Callable[[ModuleType], None]):
        self._loader = loader
        self._exec_module = exec_module

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        create = getattr(self._loader, "create_module", None)  # a loader of another library may lack it
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        self._exec_module(module)

    def __getattr__(self, name: str) -> object:
        return getattr(self._loader, name)


def replace(owner: object, name: str, value: object) -> None:
    """``owner.name = value``, remembered for :func:`uninstall`."""
    original = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
    _installed.patched.append((owner, name, original))
    setattr(owner, name, value)


def subclasses(cls: type) -> Iterator[type]:
    sub: type
    for sub in cls.__subclasses__():
        yield sub
        yield from subclasses(sub)


def _patch(braintrace: ModuleType) -> None:
    # imports braintrace, brainstate and JAX: the program has just imported braintrace
    from . import compiles

    compiles.patch(braintrace)


def may_capture() -> bool:
    """Whether this call may be captured: installed, in the program's own process, not in a lint."""
    return installed() and _installed.pid == os.getpid() and not state.linting


def hand_over(capture: Capture | None) -> None:
    """The capture to the handler; whatever goes wrong there is etrace-lint's, never the program's."""
    handler = _installed.handler
    if capture is None or handler is None:
        return
    with linting():
        try:
            handler(capture)
        except Exception as exc:  # noqa: BLE001 - the program goes on as without etrace-lint
            print(f"etrace-lint: error: linting {capture.site.display_name} failed: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
