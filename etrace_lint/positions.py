"""Columns of Python code positions as findings count them.

Python reports where an instruction is (``code.co_positions()``, JAX's source
info) as 0-based UTF-8 byte offsets; findings, SARIF (``unicodeCodePoints``)
and the language server count 1-based characters. On a line with a ``τ`` or a
comment in another script before the expression, the two differ.
"""

from __future__ import annotations

import linecache
from types import TracebackType


def character_column(path: str, line: int, byte_offset: int | None) -> int:
    """The 1-based character column of a 0-based UTF-8 ``byte_offset`` on ``line`` of ``path``."""
    if byte_offset is None or byte_offset < 0:
        return 1
    linecache.checkcache(path)  # a long-lived worker sees the file as saved now
    text = linecache.getline(path, line)
    if text.isascii():
        return byte_offset + 1
    return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1


def traceback_position(tb: TracebackType) -> tuple[int, int]:
    """The line and 1-based character column of the expression a traceback entry stopped at."""
    line = tb.tb_lineno
    code = tb.tb_frame.f_code
    if tb.tb_lasti < 0:
        return line, 1
    for index, (start, _, column, _) in enumerate(code.co_positions()):
        if index == tb.tb_lasti // 2:
            if start == line and column is not None:
                return line, character_column(code.co_filename, line, column)
            break
    return line, 1
