"""What the parent, the fork server (:mod:`.zygote`) and the workers (:mod:`.worker_loop`) say to each other.

Each message is a small frozen record, pickled whole over a ``multiprocessing`` pipe
(a connection inside one travels as ``multiprocessing`` passes connections).
``None``, or a closed pipe, asks a worker or the fork server to leave.

- A worker says :class:`Ready` once its backend runs, then answers each :class:`Lint`
  with :class:`Linted`, and then with :class:`Checked`: the result goes out before the
  check of the worker's process, which the parent needs only before the worker's next target.
- The fork server says :class:`Ready` once its imports are done, or :class:`Unsafe` when
  it cannot fork safely; then it answers each :class:`Fork` with :class:`Forked`, and
  says :class:`Exited` for each worker of its that ends.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Never, Union

from ..config.settings import EngineSettings
from ..core.findings import Location, ToolError
from ..discovery.discover import TargetSpec


@dataclass(frozen=True)
class Ready:
    """A worker, or the fork server, is ready for work."""

    pid: int


@dataclass(frozen=True)
class Lint:
    """Lint one target. ``new_group``: the first target of a file on this worker (the modules an
    earlier file imported are dropped first); ``more_in_file``: more targets of the file follow."""

    index: int  # the target's place in the run, returned with its result
    spec: TargetSpec
    root: str
    settings: EngineSettings
    new_group: bool
    more_in_file: bool


@dataclass(frozen=True)
class Linted:
    """A target's result (``TargetResult.to_json()``)."""

    index: int
    result: dict[str, Any]


@dataclass(frozen=True)
class Checked:
    """What the worker's last target left changed in its process, in words (empty: the worker is fit
    for the next target). It follows the target's :class:`Linted`, so that the check of the process
    does not delay the result (in the language server, a save's diagnostics)."""

    changes: tuple[str, ...]


@dataclass(frozen=True)
class Unsafe:
    """The fork server cannot fork safely: importing ``module`` started JAX's backend (empty: the
    backend started, or threads run, without any preloaded library to blame)."""

    module: str


@dataclass(frozen=True)
class Fork:
    """Fork a worker that talks over ``connection``."""

    connection: Connection[WorkerMessage, Lint | None]  # the worker's end


@dataclass(frozen=True)
class Forked:
    pid: int


@dataclass(frozen=True)
class Exited:
    """A forked worker ended; ``code`` as ``Process.exitcode``: the exit status, or minus the signal."""

    pid: int
    code: int


WorkerMessage = Union[Ready, Linted, Checked]
ForkServerMessage = Union[Ready, Unsafe, Forked, Exited]


def _label(spec: TargetSpec) -> str:
    return f"{os.path.basename(spec.path)}::{spec.factory}"


def tool_error(spec: TargetSpec, message: str, reason: str) -> ToolError:
    return ToolError(spec.display_name, f"{_label(spec)}: {message}", Location(spec.path, spec.line), reason)


def next_message(conn: Connection[Never, Lint | Fork | None]) -> Lint | Fork | None:
    """The parent's next message (to a worker, or to the fork server); None when it says goodbye or is gone."""
    try:
        return conn.recv()
    except (EOFError, OSError):
        return None
