"""What a captured compile is (:class:`Capture`) and how it reaches the handler: the state that
:mod:`.hooks` installs and :mod:`.compiles` reads, and every function they replaced, for
:func:`~.hooks.uninstall` to put back. Imports no JAX, brainstate or braintrace."""

from __future__ import annotations

import importlib.abc
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
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
    """What :func:`~.hooks.install` set up, and what :func:`~.hooks.uninstall` puts back."""

    handler: Handler | None = None
    pid: int | None = None
    patched: list[tuple[object, str, object]] = field(default_factory=list)  # (owner, name, original)
    finder: importlib.abc.MetaPathFinder | None = None


state = _State()
installed_hooks = _Installed()


def installed() -> bool:
    return installed_hooks.handler is not None


class linting:
    """While the handler lints: compiles are the lint's own, never captured."""

    def __enter__(self) -> None:
        self._was = state.linting
        state.linting = True

    def __exit__(self, *exc: object) -> None:
        state.linting = self._was


def replace(owner: object, name: str, value: object) -> None:
    """``owner.name = value``, remembered for :func:`uninstall`."""
    original = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
    installed_hooks.patched.append((owner, name, original))
    setattr(owner, name, value)


def subclasses(cls: type) -> Iterator[type]:
    sub: type
    for sub in cls.__subclasses__():
        yield sub
        yield from subclasses(sub)


def may_capture() -> bool:
    """Whether this call may be captured: installed, in the program's own process, not in a lint."""
    return installed() and installed_hooks.pid == os.getpid() and not state.linting


def hand_over(capture: Capture | None) -> None:
    """The capture to the handler; whatever goes wrong there is etrace-lint's, never the program's."""
    handler = installed_hooks.handler
    if capture is None or handler is None:
        return
    with linting():
        try:
            handler(capture)
        except Exception as exc:  # noqa: BLE001 - the program goes on as without etrace-lint
            print(f"etrace-lint: error: linting {capture.site.display_name} failed: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
