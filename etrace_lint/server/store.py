"""The latest result of every target linted in one workspace folder.

What is shown is decided by the policy layer, exactly as for the CLI: the
findings of every target held here go through ``apply_policy`` together, so
suppressions, selection, levels and ETL301 mean the same in the editor.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable

from ..config.settings import PolicySettings
from ..core.findings import Finding, Location, TargetResult, ToolError
from ..discovery.discover import TargetSpec
from ..fixes import attach_fixes
from ..policy.decide import apply_policy, counted_notes


@dataclass(frozen=True)
class PlacedToolError:
    """A tool error and the place it is shown: its factory, or where a file fails to parse."""

    error: ToolError
    place: Location


class ResultStore:
    def __init__(self) -> None:
        self._results: dict[str, tuple[TargetSpec, TargetResult]] = {}
        self._file_errors: dict[str, ToolError] = {}  # files that cannot be parsed or read

    def update(self, rediscovered: Iterable[str], file_errors: dict[str, ToolError],
               pairs: Iterable[tuple[TargetSpec, TargetResult]]) -> None:
        """``rediscovered``: files whose targets were discovered afresh (a target gone from one
        is forgotten); ``file_errors``: those of them that cannot be parsed, whose earlier
        results are kept, as a file with a syntax error loses nothing else."""
        pairs = list(pairs)
        fresh_keys = {spec.key for spec, _ in pairs}
        for path in rediscovered:
            if path in file_errors:
                self._file_errors[path] = file_errors[path]
                continue
            self._file_errors.pop(path, None)
            for key, (spec, _) in list(self._results.items()):
                if spec.path == path and key not in fresh_keys:
                    del self._results[key]
        for spec, result in pairs:
            self._results[spec.key] = (spec, result)

    def dependents(self, files: Iterable[str]) -> list[TargetSpec]:
        """Targets held here whose recorded imports include one of ``files``."""
        files = {os.path.abspath(f) for f in files}
        return [spec for spec, result in self._results.values()
                if files.intersection(result.dependencies) or spec.path in files]

    def reads(self, specs: Iterable[TargetSpec]) -> set[str]:
        """Every file the last results of ``specs`` depended on."""
        found = set()
        for spec in specs:
            found.add(spec.path)
            held = self._results.get(spec.key)
            if held is not None:
                found.update(held[1].dependencies)
        return found

    def problems(self, settings: PolicySettings) -> dict[str, list[Finding | PlacedToolError]]:
        """What to show, per file."""
        held = list(self._results.values())
        findings = [f for _, result in held for f in result.findings]
        notes_left_out = counted_notes(result for _, result in held)
        broken = {spec.path for spec, result in held if result.tool_errors} | set(self._file_errors)
        linted = sorted({spec.path for spec, _ in held} - broken)
        outcome = apply_policy(findings, [], settings, linted, use_baseline=False, notes_left_out=notes_left_out)
        shown: dict[str, list[Finding | PlacedToolError]] = defaultdict(list)

        for finding in attach_fixes(outcome.findings):  # the same fixes --fix applies, for code actions
            shown[finding.path].append(finding)
        for spec, result in held:
            for error in result.tool_errors:
                shown[spec.path].append(PlacedToolError(error, Location(spec.path, spec.line)))
        for path, error in self._file_errors.items():
            shown[path] = [PlacedToolError(error, error.location)]  # nothing else is true of it now
        return dict(shown)
