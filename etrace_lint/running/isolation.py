"""What keeps one target's result independent of the targets a worker ran before it.

A worker process lints many targets. After each one the worker checks that
its process is still as a fresh one would be (:mod:`.process_state`) and is
retired when it is not. Two kinds of state are also put back here, so that
the common case keeps its worker:

- Modules. Each file's targets import that file with its own folder (and the
  project root) first on ``sys.path``; a helper module of the same name in
  another folder (``a/_shared.py``, ``b/_shared.py``) must never be found in
  ``sys.modules`` from the last file. Before a worker starts on another file,
  every module that does not come from an installed package is dropped, and
  ``sys.path`` is put back as it was. JAX, brainstate and braintrace stay
  imported.
- Global settings a factory or a model can change: ``brainstate.environ``,
  the default random key (and NumPy's), and JAX's configuration flags, put
  back by the engine (:mod:`etrace_lint.engine.fresh_state`).

Nothing here imports JAX: the parent process uses :func:`is_installed` too.
"""

from __future__ import annotations

import contextlib
import fnmatch
import importlib
import os
import site
import sys
import sysconfig
from collections.abc import Iterator, Sequence
from functools import lru_cache

_OWN_PACKAGE = __name__.partition(".")[0]


@lru_cache(maxsize=1)
def _installed_roots() -> tuple[str, ...]:
    roots = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(os.path.realpath(path))
    try:
        roots.update(os.path.realpath(p) for p in site.getsitepackages())
    except AttributeError:  # some virtualenv layouts lack it
        pass
    user_site = getattr(site, "USER_SITE", None)
    if user_site:
        roots.add(os.path.realpath(user_site))
    return tuple(sorted(root.rstrip(os.sep) + os.sep for root in roots))


@lru_cache(maxsize=None)
def _real_folder(folder: str) -> str:
    return os.path.realpath(folder)


def real_path(file: str) -> str:
    """``os.path.realpath``, each folder resolved once: a worker places thousands of module files
    that live in a few hundred folders, and resolving a path costs a ``lstat`` per component."""
    folder, name = os.path.split(os.path.abspath(file))
    path = os.path.join(_real_folder(folder), name)
    return os.path.realpath(path) if os.path.islink(path) else path


@lru_cache(maxsize=None)
def is_installed(file: str) -> bool:
    """Whether a module's file comes from the interpreter or an installed package (asked for every
    module after every target: answered once per file)."""
    real = real_path(file)
    return real.startswith(_installed_roots()) or f"{os.sep}site-packages{os.sep}" in real


def _is_own(name: str) -> bool:
    return name == _OWN_PACKAGE or name.startswith(_OWN_PACKAGE + ".")


def _module_files(module: object) -> list[str]:
    file = getattr(module, "__file__", None)
    if isinstance(file, str):
        return [file]
    # a namespace package has a __path__ and no __file__
    return [p for p in getattr(module, "__path__", None) or () if isinstance(p, str)]


def is_user_module(name: str, module: object) -> bool:
    """A module that came from the user's files rather than an installed package."""
    if module is None or _is_own(name):
        return False
    files = _module_files(module)
    return bool(files) and not all(is_installed(f) for f in files)


class ModuleBaseline:
    """What the worker had before any target ran, and the way back to it.

    Modules imported before the first target (JAX, brainstate, braintrace,
    the preloaded libraries) are never dropped, wherever they come from, nor
    are modules of libraries outside the user's folders (a package on
    ``PYTHONPATH`` is a library, not the user's code). Dropped are the
    modules that live in a project root or a target's folder and do not come
    from an installed package.
    """

    def __init__(self) -> None:
        self.path = list(sys.path)
        self.modules = set(sys.modules.copy())
        self.trees: set[str] = set()

    def enter(self, path: str, root: str) -> None:
        """A file's targets start: its folder and the project root hold the user's modules."""
        for tree in (os.path.dirname(os.path.abspath(path)), os.path.abspath(root)):
            self.trees.add(os.path.realpath(tree).rstrip(os.sep) + os.sep)

    def _from_user_tree(self, name: str, module: object) -> bool:
        if name in self.modules or not is_user_module(name, module):
            return False
        trees = tuple(self.trees)
        return any(real_path(f).startswith(trees) for f in _module_files(module))

    def reset(self) -> int:
        """Drop every module of the user's folders and restore ``sys.path``; returns how many were dropped."""
        # a copy made in one step: another thread (JAX's, a finalizer run by the collector) may import while the
        # list is built, and listing the live dict then raises "dictionary changed size during iteration"
        dropped = [name for name, module in sys.modules.copy().items() if self._from_user_tree(name, module)]
        for name in dropped:
            sys.modules.pop(name, None)
        sys.path[:] = self.path
        importlib.invalidate_caches()
        return len(dropped)


@contextlib.contextmanager
def search_path(path: str, root: str | None = None) -> Iterator[None]:
    """The model's folder, then the project root, first on ``sys.path``, as when the user runs the file."""
    entries = [os.path.dirname(os.path.abspath(path))]
    if root:
        root = os.path.abspath(root)
        if root not in entries:
            entries.append(root)
    sys.path[:0] = entries
    try:
        yield
    finally:
        for entry in entries:
            try:
                sys.path.remove(entry)
            except ValueError:
                pass


def drop_environment(names: Sequence[str]) -> list[str]:
    """Remove the variables matching ``names`` (exact names or ``fnmatch`` patterns) from the environment."""
    if not names:
        return []
    dropped = sorted(key for key in os.environ if any(fnmatch.fnmatchcase(key, pattern) for pattern in names))
    for key in dropped:
        os.environ.pop(key, None)
    return dropped
