"""Where a compile happened in the user's code: the target's name and location (JAX-free)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from types import FrameType

from ..core.findings import Location
from ..core.json_types import JsonObject
from ..core.places import cell_name, source_path
from ..core.positions import is_pseudo_file
from ..discovery.discover import TargetSpec
from ..running.isolation import is_installed

_OWN_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


@dataclass(frozen=True)
class CaptureSite:
    """The user's line that compiled a model, and the algorithm it compiled it with."""

    path: str  # absolute, or a terminal IPython cell's name (``<ipython-input-5-...>``)
    line: int
    column: int
    algorithm: str  # as the call named it: "D_RTRL", "pp_prop", "ETraceConfig(io_factorized)", a class name
    name: str = ""  # where the file's name says little, how its owner names the place ("Cell In[3], line 4")

    @property
    def display_name(self) -> str:
        """``train.py:87 (D_RTRL)``: the target's name in every output."""
        return f"{self.name or f'{os.path.basename(self.path)}:{self.line}'} ({self.algorithm})"

    @property
    def spec(self) -> TargetSpec:
        return TargetSpec(self.path, f"{self.line}:{self.column}", self.line, self.display_name)

    @property
    def location(self) -> Location:
        return Location(self.path, self.line, self.column, "compiled here")

    def to_json(self) -> JsonObject:
        return {"path": self.path, "line": self.line, "column": self.column, "algorithm": self.algorithm,
                "name": self.name}

    @classmethod
    def from_json(cls, data: JsonObject) -> CaptureSite:
        path, line, column = data["path"], data["line"], data.get("column", 1)
        if not (isinstance(path, str) and isinstance(line, int) and isinstance(column, int)):
            raise ValueError(f"not a capture site: {data!r}")
        return cls(path, line, column, str(data["algorithm"]), str(data.get("name", "")))


def _is_library(path: str) -> bool:
    if is_pseudo_file(path):
        return True
    if path.startswith("<"):  # a terminal IPython cell: the user's code
        return False
    absolute = os.path.abspath(path)
    return absolute.startswith(_OWN_FOLDER) or is_installed(absolute)


def _column(frame: FrameType) -> int:
    """The 1-based column of the call being made on the frame's current line, where Python knows it."""
    try:
        positions = list(frame.f_code.co_positions())
        index = frame.f_lasti // 2
        if 0 <= index < len(positions):
            column = positions[index][2]
            if column is not None:
                return column + 1
    except (AttributeError, ValueError):
        pass
    return 1


def user_frame(start: FrameType | None = None) -> FrameType | None:
    """The innermost frame of the user's own code above ``start``: not etrace-lint, not an installed package."""
    frame: FrameType | None = start if start is not None else sys._getframe(1)
    while frame is not None and _is_library(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def site_of_call(algorithm: str, start: FrameType | None = None) -> CaptureSite:
    """The capture site of a compile called (through any library frames) from the user's code."""
    frame = user_frame(start if start is not None else sys._getframe(1))
    if frame is None:  # compiled from inside a library: the outermost frame is still the program's
        return CaptureSite(os.path.abspath(sys.argv[0] or "<program>"), 1, 1, algorithm)
    path, line = source_path(frame.f_code.co_filename), frame.f_lineno
    cell = cell_name(path)  # a cell of this process's IPython: named as its tracebacks name the line
    return CaptureSite(path, line, _column(frame), algorithm, f"{cell}, line {line}" if cell else "")
