"""A place in the user's code: the path a finding records (:func:`source_path`), and how the outputs
name it (:func:`place`): ``models/net.py:20:12``, or ``Cell In[3], line 1``.

The code IPython runs from a cell has a file name that tells its user nothing: ``<ipython-input-3-f2fa634fdf1a>``
in a terminal, ``/tmp/ipykernel_81/2736474.py`` in a Jupyter kernel. IPython's tracebacks name it by the cell
(``Cell In[3], line 1``), from what its compiler remembers of each cell it compiled
(``CachingCompiler.format_code_name``); the outputs ask the same compiler, so a finding's place reads as the
traceback beside it. Outside IPython, or for a file IPython did not compile, a place is its path.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable


def source_path(code_file: str) -> str:
    """A code object's file as a finding records it: absolute, except a name that is no file, which stays
    as it is (a terminal IPython cell's ``<ipython-input-3-f2fa634fdf1a>``: the only name its lines have)."""
    return code_file if code_file.startswith("<") else os.path.abspath(code_file)


def cell_name(path: str) -> str | None:
    """``Cell In[3]``: IPython's name for the cell whose code has the file name ``path``, where this
    process runs an IPython that compiled it; else None."""
    ipython = sys.modules.get("IPython")  # never imported here: a process with IPython cells has imported it
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    format_code_name = getattr(getattr(shell, "compile", None), "format_code_name", None)  # IPython >= 8
    named = format_code_name(path) if format_code_name is not None else None
    return f"{named[0]} {named[1]}" if named else None


def place(path: str, line: int, column: int | None = None, shown_path: Callable[[str], str] = str) -> str:
    """``models/net.py:20:12`` (the path as ``shown_path`` shows it, the column where given), or
    ``Cell In[3], line 20`` for a cell of this process's IPython, as its tracebacks name the line."""
    cell = cell_name(path)
    if cell is not None:
        return f"{cell}, line {line}"
    return f"{shown_path(path)}:{line}" + (f":{column}" if column is not None else "")
