"""Where the user's code puts a module in place: ``self.neu = bps.LIF(...)``.

A state that a library creates lazily (a neuron's ``V`` in its ``init_state``,
called by ``init_all_states``) has no line of the user's own among the frames
that created it, or only the ``init_all_states`` call. The line a modeller
knows it by is where their class assigned the library module that holds it.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from collections.abc import Hashable
from typing import Any

from ..core.findings import Location
from ..core.naming import StatePath
from ..core.places import source_path
from . import jaxpr_view as jv


def _class_span(cls: type) -> tuple[str, int, int] | None:
    """The file and first and last line of a class of the user's code; None for a library's."""
    try:
        path = inspect.getsourcefile(cls)
        if not path or jv.is_library_file(path):
            return None  # before reading its source: finding a class parses the whole file
        lines, start = inspect.getsourcelines(cls)
    except (OSError, TypeError):
        return None
    return source_path(path), start, start + len(lines) - 1


def _self_assignments(span: tuple[str, int, int]) -> dict[str, tuple[str, int]]:
    """``self.<name> = ...`` in the class at ``span``: name -> (file, line) of the first."""
    path, start, end = span
    source = "".join(linecache.getline(path, n) for n in range(start, end + 1))
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return {}
    found: dict[str, tuple[str, int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                line = start + node.lineno - 1
                if target.attr not in found or line < found[target.attr][1]:
                    found[target.attr] = (path, line)
    return found


def _step(obj: object, part: Hashable) -> object:
    """The module, list item or dict entry ``part`` of one of the user's objects."""
    if isinstance(part, str) and hasattr(obj, part):
        return getattr(obj, part)
    container: Any = obj  # a list, a dict or a container module of the user's: whatever it indexes by
    return container[part]


class Assignments:
    """The model's own classes and their ``self.<name> = ...`` lines, read once per class."""

    def __init__(self, model: object):
        self._model = model
        self._spans: dict[type, tuple[str, int, int] | None] = {}
        self._assigned: dict[tuple[str, int, int], dict[str, tuple[str, int]]] = {}

    def span(self, cls: type) -> tuple[str, int, int] | None:
        if cls not in self._spans:
            self._spans[cls] = _class_span(cls)
        return self._spans[cls]

    def _assigned_in(self, cls: type, name: str) -> Location | None:
        for klass in cls.__mro__:
            span = self.span(klass)
            if span is None:
                continue
            if span not in self._assigned:
                self._assigned[span] = _self_assignments(span)
            where = self._assigned[span].get(name)
            if where is not None:
                path, line = where
                text = linecache.getline(path, line)
                return Location(path, line, len(text) - len(text.lstrip()) + 1)
        return None

    def holder(self, path: StatePath) -> tuple[Location | None, list[tuple[str, int, int]]]:
        """Where the deepest class of the model's own along ``path`` assigns the attribute the state
        hangs from, and the spans of those classes and of their own bases (a state created inside one is
        placed by its own frame, whether the class or a base it inherits ``__init__`` from creates it)."""
        spans = []
        assigned = None
        obj = self._model
        for part in path:
            own = [span for span in map(self.span, type(obj).__mro__) if span is not None]
            if own:
                spans.extend(own)
                if isinstance(part, str):
                    assigned = self._assigned_in(type(obj), part) or assigned
            try:
                obj = _step(obj, part)
            except (KeyError, IndexError, TypeError, AttributeError):
                break
        return assigned, spans
