"""The user's files as the fixes read them: their text (an editor's unsaved buffer first), and
their concrete syntax, parsed once per text.

Nothing here imports libcst: every run loads the rules, and the rules name their fixes; the
parser loads when a fix first reads a file's syntax, or on a thread while the workers lint.
"""

from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING

from ..core.rule import SourceTexts

if TYPE_CHECKING:
    from .source import ParsedSource


class Sources:
    """The text of each file a run's fixes read, read once; None for a file that cannot be."""

    def __init__(self, overrides: dict[str, str] | None = None):
        self._texts: dict[str, str | None] = dict(overrides or {})

    def text(self, path: str) -> str | None:
        if path not in self._texts:
            try:
                with open(path, encoding="utf-8") as handle:
                    self._texts[path] = handle.read()
            except (OSError, UnicodeDecodeError):
                self._texts[path] = None
        return self._texts[path]


def _parser() -> type[ParsedSource]:
    # lazy: importing libcst takes about 0.2 s (-X importtime), and a run with no fix
    # to offer, served from the cache or not, never needs it
    from .source import ParsedSource

    return ParsedSource


@functools.lru_cache(maxsize=16)
def _parse(path: str, text: str) -> ParsedSource | None:
    try:
        return _parser()(path, text)
    except Exception:  # libcst's ParserSyntaxError, or a text it cannot read
        return None


def parsed(files: SourceTexts, path: str) -> ParsedSource | None:
    """The concrete syntax of ``path`` as ``files`` holds it, parsed once per text; None for a file
    that cannot be read or parsed."""
    text = files.text(path)
    return _parse(path, text) if text is not None else None


def load_parser_in_background() -> None:
    """Import libcst on a thread while the workers lint: the fixes need it once the findings are in,
    and the import (about 0.2 s) would otherwise come after the last result."""

    def load() -> None:
        try:
            _parser()
        except Exception:  # noqa: BLE001 - the fix that needs it says why
            pass

    threading.Thread(target=load, name="etrace-lint-load-libcst", daemon=True).start()
