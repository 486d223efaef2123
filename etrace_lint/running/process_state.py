"""Whether a worker process is still as a fresh one would be: the check that retires a disturbed worker.

A worker lints many targets, and a target is user code: it can replace a
library function (``jax.numpy.dot = ...``, ``brainstate.nn.Linear.update =
...``), change directory, set ``brainstate.environ`` or a JAX flag at import,
close ``sys.stdout`` or file descriptor 2, start a thread. Rather than undo a
list of such changes, the worker takes a :class:`Fingerprint` of its process
before the first target and compares it after each one; a worker whose
process no longer matches is retired by the parent and the next target runs
in a fresh fork of the fork server.

What the fingerprint covers, with no list of libraries or names:

- the namespace of every module imported before the first target (JAX,
  brainstate, braintrace, the standard library, preloaded libraries) and of
  every class defined in one: which object each name that holds code (a
  function, class, module or descriptor) is bound to. Names added later (a
  submodule imported by a target) and plain data a library rebinds as it
  runs (a cache filled on first use) are not a change;
- the process: working directory, environment variables, ``sys.path`` and
  the import hooks, ``sys.stdin/stdout/stderr`` (the objects and whether
  they are closed), what file descriptors 0-2 refer to, the recursion limit,
  the umask, the signal handlers and the number of threads;
- the values inside two settings objects whose names stay bound to the same
  object when they change: JAX's configuration and ``brainstate.environ``.

Comparing costs about 10 ms in a worker (some hundred thousand bindings
gathered and compared in C), once per target; a file with several targets
also takes one fingerprint after its import. The namespaces are gathered once,
in the fork server, for every worker it forks. Namespaces of immutable C types
are left out: no code can rebind their attributes.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import types
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from operator import call, eq, itemgetter

_SKIPPED_MODULES = ("__main__",)
_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: setting an attribute raises TypeError

Bound = list[tuple[object, ...]]  # the objects of each namespace's compared names, in order
ProcessValues = tuple[tuple[str, object], ...]  # (what, its value) pairs, as :func:`process_values`


@dataclass(frozen=True, eq=False)
class Fingerprint:
    bound: Bound | None  # the objects of each namespace's compared names, as ``Namespaces``; None: one is gone
    process: ProcessValues

    def changes(self, names: "Namespaces") -> list[str]:
        """What changed in this process since ``self`` was taken, in words (a few at most)."""
        now = process_values()
        found = [name for (name, a), (_, b) in zip(self.process, now) if a != b]
        if not names.unchanged_since(self.bound):
            found.extend(names.describe(self.bound, names.bound()))
        return found


class Namespaces:
    """The module and class namespaces a worker had before its first target, and the names in each
    that hold code. Gathering their objects is one pass in C (itemgetters mapped over the live
    namespaces), so that a check costs milliseconds. Built in the fork server, before it forks:
    every worker shares it, and adds what starting its backend imported (:meth:`add_new_modules`)."""

    def __init__(self) -> None:
        self.spaces: list[tuple[str, tuple[str, ...]]] = []
        self._getters: list[itemgetter[tuple[str, ...]]] = []
        self._namespaces: list[Mapping[str, object]] = []
        self._modules: set[str] = set()
        self.add_new_modules()

    def add_new_modules(self) -> None:
        """Cover the modules imported since the namespaces were gathered."""
        for name, module in sys.modules.copy().items():
            namespace = getattr(module, "__dict__", None)
            if name in self._modules or name in _SKIPPED_MODULES or not isinstance(namespace, dict):
                continue
            self._modules.add(name)
            self._add(name, namespace)
            for attribute, value in list(namespace.items()):
                if (isinstance(value, type) and getattr(value, "__module__", None) == name
                        and not value.__flags__ & _IMMUTABLE_TYPE):  # C types no code can change
                    self._add(f"{name}.{attribute}", vars(value))  # a live view of the class's namespace

    def _add(self, label: str, namespace: Mapping[str, object]) -> None:
        keys = tuple(k for k, v in list(namespace.items()) if isinstance(k, str) and _behaviour(v))
        if keys:
            self.spaces.append((label, keys))
            # one key would make itemgetter return the value itself, not a tuple
            self._getters.append(itemgetter(*keys) if len(keys) > 1 else itemgetter(keys[0], keys[0]))
            self._namespaces.append(namespace)

    def bound(self) -> Bound | None:
        try:
            return list(map(call, self._getters, self._namespaces))
        except KeyError:
            return None  # a name was deleted

    def unchanged_since(self, bound: Bound | None) -> bool:
        """Whether every name is bound to the object it was in ``bound``. The tuples compare in C,
        each pair of objects by identity first, so that a process where nothing changed runs none
        of their code; a name bound to another object counts as changed unless that object says it
        is equal (a bound method made again from the same function and instance)."""
        if bound is None:
            return False
        try:
            # one namespace at a time: no hundred thousand objects held at once for the collector to walk
            return all(map(eq, map(call, self._getters, self._namespaces), bound))
        except Exception:  # noqa: BLE001 - a name was deleted (KeyError), or a new object's ``__eq__`` failed
            return False

    def describe(self, before: Bound | None, after: Bound | None) -> list[str]:
        """The first few names whose objects differ (the slow path, once a difference is known)."""
        found: list[str] = []
        for index, ((label, keys), namespace) in enumerate(zip(self.spaces, self._namespaces)):
            if after is None:
                missing = [key for key in keys if key not in namespace]
                if missing:
                    found.append(f"{label}.{missing[0]} was deleted")
            elif before is not None and index < len(before):
                changed = [key for key, x, y in zip(keys, before[index], after[index]) if x is not y]
                if changed:
                    found.append(f"{label}.{changed[0]} was replaced")
            if len(found) >= 5:
                break
        return found or ["a library namespace changed"]


def _behaviour(value: object) -> bool:
    """Code a target could swap for its own: functions, classes, modules, descriptors. Plain data that
    a library rebinds as it runs (a lazily filled ``None``, a flag, a cache) is not compared."""
    return callable(value) or isinstance(value, (types.ModuleType, property, staticmethod, classmethod))


def _descriptor(fd: int) -> tuple[int, int, int] | str:
    try:
        stat = os.fstat(fd)
    except OSError:
        return "closed"
    return (stat.st_dev, stat.st_ino, stat.st_mode)


def _stream(stream: object) -> tuple[int, bool]:
    return (id(stream), bool(getattr(stream, "closed", False)))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _signals() -> tuple[int | None, ...]:
    handlers: list[int | None] = []
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGALRM, signal.SIGPIPE):
        try:
            handlers.append(id(signal.getsignal(number)))
        except (ValueError, OSError):
            handlers.append(None)
    return tuple(handlers)


def _settings() -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """The values inside JAX's configuration and brainstate.environ (their names keep pointing at the
    same objects when a value changes)."""
    jax = sys.modules.get("jax")
    flags = tuple(sorted((k, repr(v)) for k, v in jax.config.values.items())) if jax is not None else ()
    environ = sys.modules.get("brainstate.environ")
    state = getattr(environ, "_ENV_STATE", None)
    settings = getattr(state, "settings", None)
    values = tuple(sorted((str(k), repr(v)) for k, v in settings.items())) if isinstance(settings, dict) else ()
    return flags, values


def process_values() -> ProcessValues:
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = None  # the folder was removed under the process
    flags, environ = _settings()
    return (
        ("the working directory", cwd),
        ("the environment variables", tuple(sorted(os.environ.items()))),
        ("sys.path", tuple(sys.path)),
        ("the import hooks", tuple(map(id, sys.meta_path)) + tuple(map(id, sys.path_hooks))),
        ("sys.stdin, sys.stdout or sys.stderr", (_stream(sys.stdin), _stream(sys.stdout), _stream(sys.stderr))),
        ("file descriptors 0-2", tuple(_descriptor(fd) for fd in (0, 1, 2))),
        ("the recursion limit", sys.getrecursionlimit()),
        ("the umask", _umask()),
        ("the signal handlers", _signals()),
        ("the warning filters", tuple(map(repr, warnings.filters))),
        ("the running threads", threading.active_count()),
        ("JAX's configuration", flags),
        ("brainstate.environ", environ),
    )


_gathered: Namespaces | None = None


def gather() -> None:
    """Gather the namespaces now: in the fork server, once its imports are done, for every worker."""
    global _gathered
    _gathered = Namespaces()


def namespaces() -> Namespaces:
    """The namespaces :func:`gather` found, with the modules imported since; gathered now if it did not run."""
    if _gathered is None:
        return Namespaces()
    _gathered.add_new_modules()
    return _gathered


def fingerprint(names: Namespaces) -> Fingerprint:
    return Fingerprint(names.bound(), process_values())
