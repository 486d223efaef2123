"""Where a run's pyproject.toml is found: where the search starts, and the walk up from there.

It imports nothing but ``os``: the daemon's client finds its project with it before the options
table, the rules or the writers load.
"""

from __future__ import annotations

import os
from typing import Callable, TypeVar

Table = TypeVar("Table")


def search_start(paths: list[str]) -> str:
    """Where the search for pyproject.toml begins: the first path given, else the cwd."""
    for path in paths:
        path = path.split("::", 1)[0]
        if os.path.exists(path):
            return path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    return os.getcwd()


def nearest(start: str, table_of: Callable[[str], Table | None]) -> tuple[str, Table] | None:
    """The nearest pyproject.toml at or above ``start`` whose ``table_of`` is not None, with that table.

    Like ruff, a pyproject.toml without etrace-lint's table does not stop the search; ``table_of``
    raises for one that cannot be read, which stops it: it may be the one the user meant.
    """
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            table = table_of(candidate)
            if table is not None:
                return candidate, table
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent
