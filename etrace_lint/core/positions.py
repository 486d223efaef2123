"""Columns of Python code positions as findings count them.

Python reports where an instruction is (``code.co_positions()``, JAX's source
info) as 0-based UTF-8 byte offsets; findings, SARIF (``unicodeCodePoints``)
and the language server count 1-based characters. On a line with a ``τ`` or a
comment in another script before the expression, the two differ.
"""

from __future__ import annotations

import linecache
from types import CodeType, FrameType, TracebackType


def character_column(path: str, line: int, byte_offset: int | None) -> int:
    """The 1-based character column of a 0-based UTF-8 ``byte_offset`` on ``line`` of ``path``."""
    if byte_offset is None or byte_offset < 0:
        return 1
    linecache.checkcache(path)  # a long-lived worker sees the file as saved now
    text = linecache.getline(path, line)
    if text.isascii():
        return byte_offset + 1
    return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1


def instruction_position(code: CodeType, lasti: int, line: int) -> tuple[int, int]:
    """The line and 1-based character column of the expression the instruction at byte offset
    ``lasti`` of ``code`` runs (``line``: the line Python reports for it)."""
    if lasti < 0:
        return line, 1
    for index, (start, _, column, _) in enumerate(code.co_positions()):
        if index == lasti // 2:
            if start == line and column is not None:
                return line, character_column(code.co_filename, line, column)
            break
    return line, 1


def traceback_position(tb: TracebackType) -> tuple[int, int]:
    """Where a traceback entry stopped: the expression that raised, or the call it went into."""
    return instruction_position(tb.tb_frame.f_code, tb.tb_lasti, tb.tb_lineno)


def frame_position(frame: FrameType) -> tuple[int, int]:
    """Where a running frame is: the expression it evaluates now (the call or the assignment)."""
    return instruction_position(frame.f_code, frame.f_lasti, frame.f_lineno)


def is_pseudo_file(path: str) -> bool:
    """A code object's file that is no file (``<string>``, ``<frozen ...>``), except a terminal IPython
    cell (``<ipython-input-3-...>``): the user's own code, and the only name its lines have."""
    return not path or (path.startswith("<") and not path.startswith("<ipython-input-"))

