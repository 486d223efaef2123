"""``--memory-limit``: how much memory one worker may hold while it lints a target.

A runaway target (an allocation loop, recursion whose frames hold large
arrays) would otherwise drive its worker to many gigabytes. The parent reads
each busy worker's resident memory (``/proc/PID/statm``) as it waits, and
stops a worker past the limit: the target becomes a tool error that says how
much it held, a fresh worker takes the rest, and the run finishes. Nothing is
limited inside the worker itself (an address-space limit breaks JAX, which
reserves far more than it uses, and turns deep recursion into a
``SystemError``), so a target that recurses too deep still reads as
``RecursionError``.
"""

from __future__ import annotations

import os

from ..core.sizes import format_size, parse_size

DEFAULT = 4 * 1024 ** 3

__all__ = ["DEFAULT", "format_size", "parse_size", "peak", "reset_peak", "resident"]
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident(pid: int) -> int | None:
    """The resident memory of a process in bytes; None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return None


def reset_peak() -> bool:
    """Start this process's peak resident memory (``VmHWM``) again from what it holds now; False
    where the kernel does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def peak() -> int | None:
    """This process's peak resident memory in bytes since it started or ``reset_peak``; None when
    it cannot be read."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        return None
    return None
