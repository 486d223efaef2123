"""``partialFingerprints.primaryLocationLineHash`` the way GitHub's upload action computes it.

A rolling hash over the first 100 non-blank characters from the start of each
line (line endings normalised to ``\\n``), with a ``:N`` occurrence suffix for
identical hashes. Computing it here means code scanning matches alerts across
runs even when lines move, without the upload action reading our files.
"""

from __future__ import annotations

import functools
import os

_TAB, _SPACE, _LF, _CR = 9, 32, 10, 13
_EOF = 65535
_BLOCK_SIZE = 100
_MOD = 37
_MASK = (1 << 64) - 1
_FIRST_MOD = pow(_MOD, _BLOCK_SIZE, 1 << 64)


def line_hashes(text: str) -> dict[int, str]:
    """1-based line number -> ``hash:occurrence`` for every line of ``text``."""
    window = [0] * _BLOCK_SIZE
    line_numbers = [-1] * _BLOCK_SIZE
    hashes: dict[int, str] = {}
    counts: dict[str, int] = {}
    state = {"hash": 0, "index": 0, "line": 0, "line_start": True, "prev_cr": False}

    def output() -> None:
        value = format(state["hash"] & _MASK, "x")
        counts[value] = counts.get(value, 0) + 1
        hashes[line_numbers[state["index"]]] = f"{value}:{counts[value]}"
        line_numbers[state["index"]] = -1

    def update(current: int) -> None:
        index = state["index"]
        begin = window[index]
        window[index] = current
        state["hash"] = (_MOD * state["hash"] + current - _FIRST_MOD * begin) & _MASK
        state["index"] = (index + 1) % _BLOCK_SIZE

    def process(current: int) -> None:
        if current in (_SPACE, _TAB) or (state["prev_cr"] and current == _LF):
            state["prev_cr"] = False
            return
        if current == _CR:
            current = _LF
            state["prev_cr"] = True
        else:
            state["prev_cr"] = False
        if line_numbers[state["index"]] != -1:
            output()
        if state["line_start"]:
            state["line_start"] = False
            state["line"] += 1
            line_numbers[state["index"]] = state["line"]
        if current == _LF:
            state["line_start"] = True
        update(current)

    # JavaScript strings are UTF-16: hash code units, as charCodeAt does
    units = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(units), 2):
        process(units[i] | (units[i + 1] << 8))
    process(_EOF)
    for _ in range(_BLOCK_SIZE):
        if line_numbers[state["index"]] != -1:
            output()
        update(0)
    return hashes


def file_line_hashes(path: str) -> dict[int, str]:
    try:
        stat = os.stat(path)
    except OSError:
        return {}
    # keyed on the file's size and mtime: a long-lived process sees edits
    return _cached_line_hashes(path, stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _cached_line_hashes(path: str, size: int, mtime_ns: int) -> dict[int, str]:
    try:
        with open(path, "rb") as handle:
            return line_hashes(handle.read().decode("utf-8", errors="replace"))
    except OSError:
        return {}


def primary_location_line_hash(path: str, line: int) -> str | None:
    return file_line_hashes(path).get(line)
