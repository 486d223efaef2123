"""Baselines: today's findings are recorded; later runs report only new ones, even after lines moved."""

from __future__ import annotations

import json
import shutil

import pytest
from helpers import fixture
from in_process import run_cli

from etrace_lint.config.baseline import fingerprints, new_findings
from etrace_lint.core.findings import Finding, Level, Location

NEW_MODEL = '''

class TwoPlainOpsAgain(TwoPlainOps):
    def update(self, x):
        leaked = self.leak.value * self.h.value
        self.h.value = jnp.tanh(leaked + braintrace.matmul(self.h.value, self.w_rec.value))
        return self.h.value


def etrace_target_again():
    return TwoPlainOpsAgain(), (jnp.ones((3,)),)
'''


def _findings(proc) -> list[tuple]:
    return [(f["rule"], f["model"], f["location"]["line"]) for f in json.loads(proc.stdout)["findings"]]


@pytest.fixture(scope="module")
def baselined(tmp_path_factory):
    root = tmp_path_factory.mktemp("baseline")
    shutil.copy(fixture("daily", "suppressed.py"), root / "model.py")
    written = run_cli("model.py", "--write-baseline", "baseline.json", "--output-format", "json", cwd=str(root))
    return root, written


def test_writing_a_baseline_records_todays_findings(baselined):
    root, written = baselined
    assert written.returncode == 0, written.stderr
    assert "recorded 2 findings in baseline.json" in written.stderr
    assert _findings(written) == []
    document = json.loads((root / "baseline.json").read_text())
    assert len(document["fingerprints"]) == 2
    assert str(root) not in (root / "baseline.json").read_text()
    again = run_cli("model.py", "--baseline", "baseline.json", "--output-format", "json", cwd=str(root))
    assert again.returncode == 0 and _findings(again) == []
    without = run_cli("model.py", "--output-format", "json", cwd=str(root))
    assert without.returncode == 1 and len(_findings(without)) == 2


def test_moved_lines_stay_matched_and_new_findings_show(baselined):
    root, _ = baselined
    lines = (root / "model.py").read_text().splitlines()
    # unrelated edits above the findings move every line down
    lines[1:1] = ["", "# a comment", "SCALE = 1.0", ""]
    (root / "model.py").write_text("\n".join(lines) + "\n" + NEW_MODEL)
    proc = run_cli("model.py", "--baseline", "baseline.json", "--output-format", "json", cwd=str(root))
    leak_line = next(i for i, text in enumerate((root / "model.py").read_text().splitlines(), start=1)
                     if text.strip() == "leaked = self.leak.value * self.h.value")
    found = _findings(proc)
    assert ("ETL201", "etrace_target_again", leak_line) in found, proc.stderr
    assert {model for _, model, _ in found} == {"etrace_target_again"}, found
    assert proc.returncode == 1


def _finding(line: int, message: str = "leak is not an ETP op") -> Finding:
    return Finding("ETL201", Level.WARNING, message, "m", Location("/p/model.py", line))


def test_fingerprint_ignores_line_numbers_but_counts_repeats(tmp_path):
    source = tmp_path / "model.py"
    source.write_text("a = w * h\nb = 1\na = w * h\n")
    first = _finding(1, "weight created at model.py:12")
    moved = Finding(first.rule_id, first.level, "weight created at model.py:40", first.target,
                    Location(str(source), 3))
    first = Finding(first.rule_id, first.level, first.message, first.target, Location(str(source), 1))
    assert fingerprints([first], str(tmp_path)) == fingerprints([moved], str(tmp_path))
    # the same problem twice: the second copy is new against a baseline holding one
    known = set(fingerprints([first], str(tmp_path)))
    assert new_findings([first, moved], known, str(tmp_path)) == [moved]


@pytest.mark.parametrize("content, words", [
    (None, ["baseline", "missing.json", "cannot be read"]),
    ("{not json", ["missing.json", "not JSON"]),
    ('{"format": 99, "fingerprints": []}', ["missing.json", "not an etrace-lint baseline"]),
])
def test_unusable_baseline_is_a_usage_error(tmp_path, content, words):
    if content is not None:
        (tmp_path / "missing.json").write_text(content)
    (tmp_path / "model.py").write_text("X = 1\n")
    proc = run_cli("model.py", "--baseline", "missing.json", cwd=str(tmp_path))
    assert proc.returncode == 2
    for word in words:
        assert word in proc.stderr
    assert "Traceback" not in proc.stderr
