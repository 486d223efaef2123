"""Automatic fixes: what a violation offers (``core.rule.Fixable``), checked by linting the edited source again.

- :mod:`.edits` applies edits to text and shows them as a diff;
- :mod:`.files` reads the user's files for the fixes, and their syntax once per text through
  :mod:`.source` (libcst, loaded only when a fix first parses a file), which adds ``import braintrace``
  where :mod:`.import_placement` says;
- :mod:`.etp` and :mod:`.suppression` are the fixes ETL201's violation and ETL301 offer;
- :mod:`.apply` checks and writes them.

May import: ``core``, ``config``, ``discovery``, ``policy`` and ``running`` (to lint an edited source again).
"""

from __future__ import annotations

import re

from .apply import FixReport, attach_fixes, run_fixes
from .files import Sources, load_parser_in_background

APPLICABILITIES = ("safe", "unsafe", "none")


def documented_fix(docs: str) -> str:
    """What a rule's documentation says of its fix: ``safe``, ``unsafe`` or ``none``."""
    match = re.search(r"^Fix:\s*(safe|unsafe|none)\b", docs, re.M)
    return match.group(1) if match else "none"


__all__ = ["APPLICABILITIES", "FixReport", "Sources", "attach_fixes", "documented_fix", "load_parser_in_background",
           "run_fixes"]
