"""What a target read: the modules it had imported and the files it opened, for the cache to key on.

Inside a worker, an audit hook (PEP 578) sees every ``open`` while a target
is imported, built and traced: a data file the factory reads with ``open``,
``json.load`` or ``np.load`` is a dependency like the model's own source.
After the target, every module in the process is placed:

- the standard library: the Python version (already part of every key);
- a module of an installed distribution: that distribution's name and
  version (``numpy 1.26.4``), read from package metadata;
- anything else (the project's files, a helper on ``PYTHONPATH``, a module
  outside any distribution): the file, which the cache keys by content.

Files the interpreter and the libraries open for themselves (compiled
``.pyc`` files, JAX's compiled programs, ``/proc``) and files inside an
installed distribution (its version stands for them) are not recorded.
"""

from __future__ import annotations

import csv
import importlib.metadata
import inspect
import os
import stat
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import etrace_lint

from .isolation import is_installed, real_path

_OWN_PACKAGE = __name__.partition(".")[0]
_SYSTEM = ("/proc/", "/sys/", "/dev/")
_OWN_FOLDER = os.path.dirname(os.path.abspath(etrace_lint.__file__)) + os.sep  # its source is part of every key


@dataclass(frozen=True)
class Reads:
    files: tuple[str, ...]  # absolute paths, keyed by content
    distributions: tuple[tuple[str, str], ...]  # (name, version), sorted


class _Recorder:
    """The files opened for reading since :meth:`start` (one hook per process; it cannot be removed).

    The hook runs on every audited call of the process for as long as it lives (JAX calls ``id()``,
    an audited call, thousands of times per model): it is a plain function that returns at once on
    any other event, about a third of the cost of a bound method's call."""

    def __init__(self) -> None:
        self.active = False
        self.opened: set[str] = set()
        sys.addaudithook(_hook_for(self))

    def note(self, args: tuple[object, ...]) -> None:
        path, mode = args[0], args[1]
        flags = args[2] if len(args) > 2 else 0
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return  # a file descriptor
        if isinstance(mode, str):
            reading = "r" in mode or "+" in mode
        else:
            reading = isinstance(flags, int) and (flags & os.O_ACCMODE) in (os.O_RDONLY, os.O_RDWR)
        if reading:
            self.opened.add(os.path.abspath(path))

    def start(self) -> None:
        self.opened = set()
        self.active = True

    def stop(self) -> set[str]:
        self.active = False
        return self.opened


def _hook_for(recorder: _Recorder) -> Callable[[str, tuple[object, ...]], None]:
    def hook(event: str, args: tuple[object, ...]) -> None:
        if event == "open" and recorder.active:
            recorder.note(args)

    return hook


_recorder: _Recorder | None = None


def recorder() -> _Recorder:
    global _recorder
    if _recorder is None:
        _recorder = _Recorder()
    return _recorder


@lru_cache(maxsize=1)
def _top_level_distributions() -> dict[str, list[str]]:
    """The distributions that provide each top-level name, as ``importlib.metadata.packages_distributions``
    says, without its check that every file a distribution lists exists (a ``stat`` per installed
    file: most of a second in the fork server, on every run)."""
    found: dict[str, list[str]] = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        for top in _top_level_names(dist):
            found.setdefault(top, []).append(name)
    return found


def _top_level_names(dist: importlib.metadata.Distribution) -> set[str]:
    declared = dist.read_text("top_level.txt")
    if declared:
        return set(declared.split())
    names = set()
    for row in csv.reader((dist.read_text("RECORD") or "").splitlines()):
        if not row:
            continue
        first, slash, _ = row[0].partition("/")
        name = first if slash else inspect.getmodulename(first)
        if name and "." not in name and name != "__pycache__":  # not ``..`` (scripts), ``x.dist-info``, ``x.libs``
            names.add(name)
    return names


def warm() -> None:
    """Read the distributions' metadata once (in the fork server, for every worker it forks)."""
    _top_level_distributions()


@lru_cache(maxsize=None)
def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return ""


@lru_cache(maxsize=1)
def _stdlib_roots() -> tuple[str, ...]:
    roots = {os.path.realpath(sysconfig.get_paths()[key]) for key in ("stdlib", "platstdlib")}
    return tuple(root.rstrip(os.sep) + os.sep for root in roots)


@lru_cache(maxsize=1)
def _site_roots() -> tuple[str, ...]:
    roots = {os.path.realpath(p) for p in sys.path if p and os.path.basename(p) in ("site-packages", "dist-packages")}
    roots.update(os.path.realpath(sysconfig.get_paths()[key]) for key in ("purelib", "platlib"))
    return tuple(sorted((root.rstrip(os.sep) + os.sep for root in roots), key=len, reverse=True))


def _top_level(real: str) -> str | None:
    """The top-level name a file of a site folder belongs to (``scipy`` for ``scipy/_x.so``)."""
    for root in _site_roots():
        if real.startswith(root):
            first = real[len(root):].split(os.sep, 1)[0]
            return first.split(".", 1)[0]
    return None


@lru_cache(maxsize=None)
def _placed(file: str) -> tuple[str, str] | str | None:
    """(distribution, version) for a file of an installed distribution, None for the standard
    library, else the file itself."""
    real = real_path(file)
    if real.startswith(_stdlib_roots()) and f"{os.sep}site-packages{os.sep}" not in real:
        return None
    if is_installed(file):
        names = _top_level_distributions().get(_top_level(real) or "")
        if names:
            dist = sorted(names)[0]
            return (dist, _version(dist))
    return os.path.abspath(file)


def _module_file(module: object) -> str | None:
    file = getattr(module, "__file__", None)
    return file if isinstance(file, str) else None


def _ignored(path: str, skip: tuple[str, ...]) -> bool:
    if path.startswith(_SYSTEM) or path.endswith((".pyc", ".pyo")) or path.startswith(skip):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # gone since: the cache cannot check it, and keeps nothing
    return not stat.S_ISREG(mode) or is_installed(path)


# where each module in this process was placed, by name, with the module object (a module imported
# again under the same name is placed again): most of a worker's modules are placed once
_PLACED_MODULES: dict[str, tuple[object, tuple[str, str] | str | None]] = {}


def _place_module(name: str, module: object) -> tuple[str, str] | str | None:
    if module is None or name.startswith((_OWN_PACKAGE + ".", "__editable__")) or name == _OWN_PACKAGE:
        return None
    file = _module_file(module)
    return _placed(file) if file else None


def _placement(name: str, module: object) -> tuple[str, str] | str | None:
    known = _PLACED_MODULES.get(name)
    if known is not None and known[0] is module:
        return known[1]
    placed = _place_module(name, module)
    _PLACED_MODULES[name] = (module, placed)
    return placed


def place_loaded_modules() -> None:
    """Place every module imported so far (in the fork server: no worker places them again)."""
    for name, module in sys.modules.copy().items():
        _placement(name, module)


def collect(opened: set[str], skip: tuple[str, ...] = ()) -> Reads:
    """Every module in this process and the files in ``opened``, placed as the module docstring says.
    ``skip``: folders whose files are the tool's own (the compilation cache)."""
    files: set[str] = set()
    distributions: dict[str, str] = {}
    for name, module in sys.modules.copy().items():
        placed = _placement(name, module)
        if isinstance(placed, tuple):
            distributions[placed[0]] = placed[1]
        elif placed is not None and placed not in files and os.path.exists(placed):
            files.add(placed)
    skip = skip + (_OWN_FOLDER,)
    files.update(path for path in opened if not _ignored(path, skip))
    return Reads(tuple(sorted(files)), tuple(sorted(distributions.items())))
