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

__all__ = ["DEFAULT", "format_size", "parse_size", "resident"]
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident(pid: int) -> int | None:
    """The resident memory of a process in bytes; None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return None
