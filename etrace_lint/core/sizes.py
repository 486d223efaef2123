"""Sizes in bytes as people write and read them: ``"4GiB"`` in, ``"4 GiB"`` out (powers of 1024).

Plain text handling, shared by the configuration (``--memory-limit``, ``--memory-budget``), the
workers' memory limit and the advisor's tables.
"""

from __future__ import annotations

import math
import re

_UNITS = {"b": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3, "t": 1024 ** 4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_OFF = ("0", "none", "off", "unlimited")


def parse_size(text: object) -> int:
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
