"""Shared test helpers: lint a fixture in-process and compare with its ``# expect:`` markers.

A fixture line that should be reported carries ``# expect: ETL005`` (several
ids separated by commas). :func:`assert_fixture` checks that exactly those
(line, rule) pairs are reported: every finding of level warning or error, and
every note whose rule is named by some marker in the file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from etrace_lint.config.settings import EngineSettings, Settings
from etrace_lint.core.findings import Level
from etrace_lint.core.registry import all_rules
from etrace_lint.discovery.discover import discover
from etrace_lint.engine.lint import lint_target

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "tests", "fixtures")
# the SARIF 2.1.0 schema, carried by the repository (source and licence: tests/data/README.md)
SARIF_SCHEMA = os.path.join(REPO, "tests", "data", "sarif-schema-2.1.0.json")
MARKER = re.compile(r"#\s*expect:\s*([A-Z0-9?, ]+)")


def sarif_validator():
    """A validator for SARIF 2.1.0 logs (the schema is JSON Schema draft-04)."""
    import json

    import jsonschema

    with open(SARIF_SCHEMA, encoding="utf-8") as handle:
        return jsonschema.Draft4Validator(json.load(handle))


def fixture(*parts: str) -> str:
    return os.path.join(FIXTURES, *parts)


def engine_settings(**run_options) -> EngineSettings:
    """What a run with these engine options hands the engine, every note built: the opt-in
    rules they turn on are the policy's to name (``policy.engine_scope``).

    The in-process lints of the rules' tests leave the learning-signal probe out unless they ask for it
    (``probe=True``): a fixture marks what its own rules report, and the probe's measured verdicts are
    the probe's tests' (tests/test_probe.py); runs through the command line probe as a user's do."""
    from etrace_lint.policy.scope import stage_settings

    return stage_settings(Settings().with_values({"probe": False, **run_options}), every_note=True).engine


def _lint_each(path: str, lint_one):
    """Findings and tool errors of every target in ``path``, each target's result from ``lint_one(spec)``."""
    found = discover([path], REPO)
    findings, errors = [], list(found.tool_errors)
    for spec in found.targets:
        result = lint_one(spec)
        findings.extend(result.findings)
        errors.extend(result.tool_errors)
    return findings, errors


def lint_file(path: str, **run_options):
    """Findings and tool errors of every target in ``path`` (or ``path::factory``)."""
    return _lint_each(path, lambda spec: lint_target(spec, REPO, engine_settings(**run_options)))


# one lint per (fixture target, options) for the whole session: see lint_shared
_SHARED: dict[tuple, object] = {}


def _shared_key(spec, run_options: dict) -> tuple:
    stat = os.stat(spec.path)
    options = tuple(sorted((key, repr(value)) for key, value in run_options.items()))
    # an edited fixture, other options or another rule set (a test that adds a rule) is another lint
    return spec.path, spec.factory, stat.st_mtime_ns, stat.st_size, options, tuple(all_rules())


def _lint_once(spec, run_options: dict):
    assert os.path.abspath(spec.path).startswith(REPO + os.sep), f"not a file of the repository: {spec.path}"
    key = _shared_key(spec, run_options)
    if key not in _SHARED:
        _SHARED[key] = lint_target(spec, REPO, engine_settings(**run_options))
    return _SHARED[key]


def lint_shared(path: str, **run_options):
    """:func:`lint_file` for tests that only read what a fixture of the repository gets: each target is
    linted once per session and options, whichever test asks first, and later tests read that result.
    A test that spies on the engine, changes the environment or the rules, or lints a file it edits
    calls :func:`lint_file` instead."""
    return _lint_each(path, lambda spec: _lint_once(spec, run_options))


def shared_results(path: str, **run_options) -> dict:
    """Each target's whole result (by factory) from :func:`lint_shared`'s lints."""
    return {spec.factory: _lint_once(spec, run_options) for spec in discover([path], REPO).targets}


def expected_markers(path: str, optional: bool = False) -> set[tuple[int, str]]:
    """(line, rule) pairs marked in the file; ``ETL017?`` marks one a braintrace line may omit."""
    expected = set()
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            match = MARKER.search(line)
            if match:
                for rule in match.group(1).split(","):
                    rule = rule.strip()
                    if rule and rule.endswith("?") == optional:
                        expected.add((number, rule.rstrip("?")))
    return expected


def assert_fixture(path: str, shared: bool = False, **run_options):
    """The fixture's findings are exactly its markers; returns the findings (``shared``: from
    :func:`lint_shared`)."""
    findings, errors = (lint_shared if shared else lint_file)(path, **run_options)
    assert not errors, f"tool errors: {[e.message for e in errors]}"
    expected = expected_markers(path)
    maybe = expected_markers(path, optional=True)
    marked_rules = {rule for _, rule in expected | maybe}
    actual = set()
    for finding in findings:
        if finding.level.rank >= Level.WARNING.rank or finding.rule_id in marked_rules:
            assert os.path.abspath(finding.path) == os.path.abspath(path), (
                f"{finding.rule_id} reported outside the fixture: {finding.path}:{finding.line} {finding.message}")
            actual.add((finding.line, finding.rule_id))
    missing, extra = expected - actual, actual - expected - maybe
    detail = "\n".join(f"  {f.path}:{f.line} {f.rule_id} {f.level.value} {f.message[:120]}" for f in findings)
    assert not missing and not extra, f"missing {sorted(missing)}, unexpected {sorted(extra)}\nfindings:\n{detail}"
    return findings


def run_cli(*args: str, cwd: str = REPO, env: dict | None = None, timeout: float = 600):
    """Run ``python -m etrace_lint`` as a user would; returns the CompletedProcess."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-m", "etrace_lint", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def descendants(pid: int) -> set[int]:
    """The live processes below ``pid`` (Linux's /proc/PID/task/TID/children)."""
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children", encoding="utf-8") as handle:
                    below = [int(child) for child in handle.read().split()]
            except OSError:
                continue
            todo.extend(child for child in below if child not in found)
            found.update(below)
    return found


def running(pid: int) -> bool:
    """Whether process ``pid`` runs (one that ended, and that its parent has not reaped yet, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return not handle.read().rsplit(") ", 1)[1].startswith("Z")
    except OSError:
        return False


def ended(pids, since: float, within: float = 60.0) -> float | None:
    """Wait until none of ``pids`` runs: the seconds from ``since`` (``time.monotonic()``) until then, or
    None when some still ran ``within`` seconds after ``since``. The processes the tests stop would run for
    ten minutes or forever if nothing stopped them: ending at all is the event they wait for, and the deadline
    only keeps a test from hanging. The seconds are printed as a figure, never compared: they depend on the
    machine's load."""
    import time

    while any(running(pid) for pid in pids):
        if time.monotonic() - since > within:
            return None
        time.sleep(0.02)
    return time.monotonic() - since
