"""No process a target starts outlives it.

A factory may start processes: a plain ``subprocess.Popen``, one in a new
session (``start_new_session=True``), or one that starts a grandchild and
exits, leaving an orphan. Each worker is a child subreaper
(``PR_SET_CHILD_SUBREAPER``, Linux): orphans of its descendants become its
children rather than init's, so after every target it can find every
process the target left behind among its own children, stop them (and the
orphans that stopping them makes) and say which. The fork server is a
subreaper too, for the processes of a worker that was killed (a timeout, a
crash) before it could stop them.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from collections.abc import Set

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def end_with_parent(parent: int) -> None:
    """Kill this process when ``parent``, the process that started it, ends, however it ends (SIGTERM,
    SIGKILL): Linux tells it with SIGKILL; where it cannot, nothing changes."""
    if _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL) and os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)  # it ended before this process asked to be told


def _parent_of(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    # the command name is in parentheses and may itself hold spaces or parentheses
    fields = stat[stat.rfind(b")") + 2:].split()
    if not fields or fields[0] == b"Z":
        return None  # a zombie is reaped below, not stopped
    return int(fields[1])


def _listed_children() -> set[int] | None:
    """This process's children as each of its threads lists them (CONFIG_PROC_CHILDREN); None when the
    kernel does not list them."""
    found: set[int] = set()
    try:
        for task in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{task}/children", "rb") as handle:
                    found.update(int(pid) for pid in handle.read().split())
            except FileNotFoundError:
                if not os.path.exists(f"/proc/self/task/{task}"):
                    continue  # the thread ended meanwhile
                return None
    except OSError:
        return None
    return found


def children(skip: Set[int] = frozenset()) -> list[int]:
    """The live children of this process, but ``skip``."""
    me = os.getpid()
    listed = _listed_children()
    if listed is None:  # a slower way: every process's parent
        try:
            listed = {int(name) for name in os.listdir("/proc") if name.isdigit()}
        except OSError:
            return []
    return sorted(pid for pid in listed if pid not in skip and _parent_of(str(pid)) == me)


def describe(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            words = [w.decode("utf-8", "replace") for w in handle.read().split(b"\0") if w]
    except OSError:
        words = []
    command = " ".join(words)
    if len(command) > 80:
        command = command[:77] + "..."
    return f"{command or 'a process'} (pid {pid})"


def _reap_any() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def stop_children(skip: Set[int] = frozenset(), rounds: int = 20) -> list[str]:
    """Kill every child of this process but ``skip`` (and the orphans that killing them leaves, which a
    subreaper adopts); returns what was stopped, in words."""
    stopped: list[str] = []
    for _ in range(rounds):
        found = children(skip=skip)
        if not found:
            break
        for pid in found:
            stopped.append(describe(pid))
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.02)  # the killed processes' own children are handed to this process meanwhile
        _reap_any()
    _reap_any()
    return stopped


def is_alive(pid: int) -> bool:
    return _parent_of(str(pid)) is not None
