"""The capture points: ``braintrace.compile`` and ``compile_graph`` of every ``ETraceAlgorithm``.

:func:`install` patches braintrace once the program imports it (at once when it already has), and
:func:`uninstall` puts every patched function back. Each compile the program makes is first done
exactly as without etrace-lint; then the :class:`~.handover.Capture` (the model, its example inputs, the batch
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
from collections.abc import Callable, Sequence
from types import ModuleType

from .handover import Handler, installed, installed_hooks


def install(handler: Handler) -> None:
    """Capture every later compile of this process with ``handler``."""
    uninstall()
    installed_hooks.handler = handler
    installed_hooks.pid = os.getpid()
    module = sys.modules.get("braintrace")
    if module is not None and hasattr(module, "ETraceAlgorithm"):  # braintrace may be half imported
        _patch(module)
    else:
        finder = _PatchOnImport()
        installed_hooks.finder = finder
        sys.meta_path.insert(0, finder)


def uninstall() -> None:
    """Put back every function :func:`install` replaced."""
    finder = installed_hooks.finder
    if finder is not None and finder in sys.meta_path:
        sys.meta_path.remove(finder)
    for owner, name, original in reversed(installed_hooks.patched):
        if original is None:
            try:
                delattr(owner, name)
            except AttributeError:
                pass
        else:
            setattr(owner, name, original)
    installed_hooks.handler = None
    installed_hooks.pid = None
    installed_hooks.patched = []
    installed_hooks.finder = None


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
                    if installed() and not installed_hooks.patched:
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


def _patch(braintrace: ModuleType) -> None:
    # imports braintrace, brainstate and JAX: the program has just imported braintrace
    from . import compiles

    compiles.patch(braintrace)


