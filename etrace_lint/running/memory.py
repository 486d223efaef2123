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

import math
import os
import re

DEFAULT = 4 * 1024 ** 3
_UNITS = {"": None, "b": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3, "t": 1024 ** 4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_OFF = ("0", "none", "off", "unlimited")


def parse_size(text) -> int:
    """Bytes from ``"4GiB"``, ``"4 GB"``, ``"512M"`` (powers of 1024); 0 for ``"0"``, ``"none"``, ``"off"``."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise ValueError(f"{text!r} is not a size such as \"4GiB\" or \"512MiB\"")
    text = str(text)
    if text.strip().lower() in _OFF:
        return 0
    match = _SIZE.match(text)
    if not match or not match.group(2):
        raise ValueError(f"{text!r} is not a size with a unit, such as \"4GiB\" or \"512MiB\" (\"none\": no limit)")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def format_size(size: int, up: bool = False) -> str:
    """``size`` in the largest unit it fills, to two decimals (rounded up with ``up``: an amount past a
    limit never reads as the limit)."""
    for unit, scale in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if size >= scale:
            value = math.ceil(size / scale * 100) / 100 if up else size / scale
            return f"{value:.2f}".rstrip("0").rstrip(".") + f" {unit}"
    return f"{size} B"


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident(pid: int) -> int | None:
    """The resident memory of a process in bytes; None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return None
