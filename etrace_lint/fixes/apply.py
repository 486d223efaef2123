"""Offer, check and apply fixes (``--fix``, ``--unsafe-fixes``, ``--diff``).

A fix is applied only when the tool itself agrees: every target whose code
the edited file holds is linted again on the edited source, and the
finding must be gone with no new finding. The file is edited in place for
that check (targets import their helpers by module name) and always put
back; with ``--fix`` the checked text is then written.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import re

from ..config.settings import Settings
from ..core.findings import Edit, Finding, Fix, TargetResult
from ..core.registry import all_rules
from ..core.rule import finding_fixer
from ..discovery.discover import TargetSpec
from ..policy.decide import apply_policy
from ..policy.scope import stage_settings
from ..running.runner import run_targets
from .edits import apply_edits, overlaps, unified_diff
from .files import Sources


@dataclasses.dataclass
class FixReport:
    applied: list[Finding] = dataclasses.field(default_factory=list)  # written, or shown with --diff
    refused: list[tuple[Finding, str]] = dataclasses.field(default_factory=list)  # not written, and why
    unsafe_left: int = 0  # fixes only --unsafe-fixes applies
    diffs: list[str] = dataclasses.field(default_factory=list)

    @property
    def diff(self) -> str:
        return "".join(self.diffs)


def attach_fixes(findings: list[Finding], sources: Sources | None = None) -> list[Finding]:
    """Each finding with the fix its violation (or its rule) offers, when one applies to its source."""
    rules = all_rules()
    sources = sources or Sources()
    out = []
    for finding in findings:
        fixer = finding_fixer(finding, rules.get(finding.rule_id))
        if fixer is not None and finding.fix is None and not finding.suppressed:
            fix: Fix | None
            try:
                fix = fixer(finding, sources)
            except Exception:  # a fix that cannot be worked out is no fix, never a crash
                fix = None
            if fix is not None and fix.edits:
                finding = dataclasses.replace(finding, fix=fix)
        out.append(finding)
    return out


def _fix_path(fix: Fix) -> str | None:
    paths = {edit.path for edit in fix.edits}
    return paths.pop() if len(paths) == 1 else None


def _key(finding: Finding) -> tuple[str, str, str, str]:
    """A finding, whatever line an added import moved it to."""
    message = re.sub(r"\blines? \d+(?:-\d+)?|:\d+:\d+", "#", finding.message)
    return finding.rule_id, finding.target, finding.location.path, message


class _Checker:
    """Lints again the targets whose code a file holds, on an edited text of that file."""

    def __init__(self, settings: Settings, specs: list[TargetSpec], results: list[TargetResult]):
        self.settings = settings
        self.specs, self.results = specs, results

    def _affected(self, path: str) -> list[int]:
        return [i for i, (spec, result) in enumerate(zip(self.specs, self.results))
                if spec.path == path or path in result.dependencies]

    def _outcome(self, findings: list[Finding], files: list[str]) -> list[Finding]:
        return apply_policy(findings, [], self.settings.for_policy(), files, use_baseline=False).findings

    def check(self, path: str, before: str, after: str, fixed: list[Finding]) -> str:
        """Why the edit may not be written, or ``""`` when it may."""
        try:
            compile(after, path, "exec")
        except SyntaxError as exc:
            return f"the edited file does not compile ({exc.msg}, line {exc.lineno})"
        indices = self._affected(path)
        specs = [self.specs[i] for i in indices]
        files = sorted({spec.path for spec in specs} | {path})
        old = self._outcome([f for i in indices for f in self.results[i].findings], files)
        run = dataclasses.replace(stage_settings(self.settings).run, use_cache=False)
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(after)
            results = run_targets(specs, run) if specs else []
            errors = [e for r in results for e in r.tool_errors]
            new = self._outcome([f for r in results for f in r.findings], files)
        finally:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(before)
        if errors:
            return f"the edited model could not be linted: {errors[0].message}"
        left = collections.Counter(map(_key, old)) - collections.Counter(map(_key, fixed))
        for finding in new:
            key = _key(finding)
            if left[key] > 0:
                left[key] -= 1
                continue
            if key in set(map(_key, fixed)):
                return "the finding is still reported after the edit"
            return f"the edit adds {finding.rule_id} {finding.message}"
        return ""


def _edits(finding: Finding) -> tuple[Edit, ...]:
    """The edits of a finding's fix (every finding given to a file's fixes has one)."""
    return finding.fix.edits if finding.fix is not None else ()


def _edit_file(path: str, fixes: list[Finding],
               checker: _Checker) -> tuple[str, str, list[Finding], list[tuple[Finding, str]]]:
    """(before, after, applied, refused) for one file: all its fixes checked together, and
    one by one when together they fail."""
    with open(path, encoding="utf-8") as handle:
        before = handle.read()
    chosen: list[Finding] = []
    for finding in fixes:  # a fix that overlaps an earlier one waits for the next run
        if not any(overlaps(_edits(finding), _edits(other)) for other in chosen):
            chosen.append(finding)

    def attempt(group: list[Finding]) -> tuple[str, str]:
        after = apply_edits(before, [e for f in group for e in _edits(f)])
        return after, checker.check(path, before, after, group)

    after, why = attempt(chosen)
    if not why:
        return before, after, chosen, []
    if len(chosen) == 1:
        return before, before, [], [(chosen[0], why)]
    accepted: list[Finding] = []
    refused: list[tuple[Finding, str]] = []
    for finding in chosen:
        _, alone = attempt([finding])
        (refused.append((finding, alone)) if alone else accepted.append(finding))
    after, why = attempt(accepted) if accepted else (before, "")
    if why:  # fine alone, not together: keep the first, the others wait for the next run
        refused += [(f, why) for f in accepted[1:]]
        accepted = accepted[:1]
        after, _ = attempt(accepted)
    return before, after, accepted, refused


def run_fixes(findings: list[Finding], settings: Settings, specs: list[TargetSpec], results: list[TargetResult], *,
              write: bool, unsafe: bool) -> FixReport:
    """Check each file's fixes and, when ``write``, write the files whose fixes passed."""
    report = FixReport()
    by_file: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.fix is None or finding.suppressed:
            continue
        if finding.fix.applicability != "safe" and not unsafe:
            report.unsafe_left += 1
            continue
        path = _fix_path(finding.fix)
        if path is None or not os.path.isfile(path):
            report.refused.append((finding, "its edits span several files"))
            continue
        by_file.setdefault(path, []).append(finding)
    checker = _Checker(settings, specs, results)
    for path in sorted(by_file):
        before, after, applied, refused = _edit_file(path, by_file[path], checker)
        report.refused += refused
        if not applied:
            continue
        report.applied += applied
        report.diffs.append(unified_diff(path, before, after, settings.root))
        if write:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(after)
    return report
