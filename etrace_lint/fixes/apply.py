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
    # findings the applied edits also cleared (a refusal whose only cause was the fixed line)
    cleared: list[Finding] = dataclasses.field(default_factory=list)
    unsafe_left: int = 0  # fixes only --unsafe-fixes applies
    diffs: list[str] = dataclasses.field(default_factory=list)

    @property
    def diff(self) -> str:
        return "".join(self.diffs)

    def remaining(self, findings: list[Finding]) -> list[Finding]:
        """The findings a run still reports once its fixes are written."""
        applied = {id(finding) for finding in self.applied}
        cleared = collections.Counter(map(_key, self.cleared))
        left = []
        for finding in findings:
            if id(finding) in applied:
                continue
            if cleared[_key(finding)] > 0:
                cleared[_key(finding)] -= 1
                continue
            left.append(finding)
        return left


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


@dataclasses.dataclass(frozen=True)
class _Check:
    """What linting an edited text again says: why it may not be written (``""`` when it may),
    and the findings besides the fixed ones that it no longer reports."""
    why: str
    cleared: tuple[Finding, ...] = ()


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

    def check(self, path: str, before: str, after: str, fixed: list[Finding]) -> _Check:
        """Whether the edit may be written, and what else it clears."""
        try:
            compile(after, path, "exec")
        except SyntaxError as exc:
            return _Check(f"the edited file does not compile ({exc.msg}, line {exc.lineno})")
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
            return _Check(f"the edited model could not be linted: {errors[0].message}")
        left = collections.Counter(map(_key, old)) - collections.Counter(map(_key, fixed))
        for finding in new:
            key = _key(finding)
            if left[key] > 0:
                left[key] -= 1
                continue
            if key in set(map(_key, fixed)):
                return _Check("the finding is still reported after the edit")
            return _Check(f"the edit adds {finding.rule_id} {finding.message}")
        cleared = []  # what is left of ``left`` once the new findings are matched: the edit cleared those
        for finding in old:
            if left[_key(finding)] > 0:
                left[_key(finding)] -= 1
                cleared.append(finding)
        return _Check("", tuple(cleared))


def _edits(finding: Finding) -> tuple[Edit, ...]:
    """The edits of a finding's fix (every finding given to a file's fixes has one)."""
    return finding.fix.edits if finding.fix is not None else ()


@dataclasses.dataclass(frozen=True)
class _FileEdit:
    """One file's fixes: its text before and after, the findings fixed, those refused and why,
    and those the edit cleared besides."""
    before: str
    after: str
    applied: list[Finding]
    refused: list[tuple[Finding, str]]
    cleared: tuple[Finding, ...] = ()


def _edit_file(path: str, fixes: list[Finding], checker: _Checker) -> _FileEdit:
    """One file's fixes, checked all together, and one by one when together they fail."""
    with open(path, encoding="utf-8") as handle:
        before = handle.read()
    chosen: list[Finding] = []
    for finding in fixes:  # a fix that overlaps an earlier one waits for the next run
        if not any(overlaps(_edits(finding), _edits(other)) for other in chosen):
            chosen.append(finding)

    def attempt(group: list[Finding]) -> tuple[str, _Check]:
        after = apply_edits(before, [e for f in group for e in _edits(f)])
        return after, checker.check(path, before, after, group)

    after, check = attempt(chosen)
    if not check.why:
        return _FileEdit(before, after, chosen, [], check.cleared)
    if len(chosen) == 1:
        return _FileEdit(before, before, [], [(chosen[0], check.why)])
    accepted: list[Finding] = []
    refused: list[tuple[Finding, str]] = []
    for finding in chosen:
        _, alone = attempt([finding])
        (refused.append((finding, alone.why)) if alone.why else accepted.append(finding))
    if not accepted:
        return _FileEdit(before, before, [], refused)
    after, check = attempt(accepted)
    if check.why:  # fine alone, not together: keep the first, the others wait for the next run
        refused += [(f, check.why) for f in accepted[1:]]
        accepted = accepted[:1]
        after, check = attempt(accepted)
    return _FileEdit(before, after, accepted, refused, check.cleared)


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
        edit = _edit_file(path, by_file[path], checker)
        report.refused += edit.refused
        if not edit.applied:
            continue
        report.applied += edit.applied
        report.cleared += edit.cleared
        report.diffs.append(unified_diff(path, edit.before, edit.after, settings.root))
        if write:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(edit.after)
    return report
