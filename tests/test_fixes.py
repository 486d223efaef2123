"""--fix, --diff and --unsafe-fixes on models written the way people write them."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from helpers import fixture, lint_file
from in_process import run_cli

from etrace_lint.analysis import braintrace_adapter
from etrace_lint.config.settings import EngineSettings, Settings
from etrace_lint.core.findings import Edit, Finding, Fix, Level, Location, Subject
from etrace_lint.core.registry import all_rules
from etrace_lint.core.rule import rule_has_fix
from etrace_lint.discovery.discover import discover
from etrace_lint.engine.lint import lint_target
from etrace_lint.fixes import attach_fixes, documented_fix, run_fixes
from etrace_lint.fixes.edits import apply_edits


def _copy(tmp_path, *names: str) -> str:
    for name in names:
        shutil.copy(fixture("fixes", name), tmp_path / name)
    return str(tmp_path)


def _read(tmp_path, name: str) -> str:
    return (tmp_path / name).read_text(encoding="utf-8")


def _rules_found(path: str) -> list[str]:
    findings, errors = lint_file(path)
    assert not errors
    return sorted(f.rule_id for f in findings if f.level is not Level.NOTE)


# braintrace 0.2.8: a model whose every weight is used through a plain op is refused (ETL204) beside ETL201
REFUSED = 1 if braintrace_adapter.adds_same_step_gradients() else 0

# the fixtures one tree holds: the runs below fix them all at once, and each test reads its own files
FIXED = ("leaky_matmul.py", "forms.py", "leaky_linear.py", "weight_on_the_left.py", "unused_suppression.py")


def _fixed_by_file(stdout: str) -> dict[str, int]:
    """``--show-fixes``: how many findings the run fixed in each file."""
    counts: dict[str, int] = {}
    current = None
    for line in stdout.splitlines():
        if line.startswith("- ") and line.endswith(":"):
            current = line[2:-1]
            counts[current] = 0
        elif current and line.startswith("    "):
            counts[current] += 1
        else:
            current = None
    return counts


# the matmul forms, which the `--diff` runs show (each fix a diff offers is checked by linting again)
FORMS = ("leaky_matmul.py", "forms.py")


@pytest.fixture(scope="module")
def fixed_forms(tmp_path_factory):
    """The matmul forms after `--diff`, then the whole tree after `--fix --show-fixes`, then the forms
    after `--diff` again."""
    tmp_path = tmp_path_factory.mktemp("forms")
    root = _copy(tmp_path, *FIXED)
    before = {name: _read(tmp_path, name) for name in FIXED}
    # one cache folder, as a user's runs share theirs: the fix run is served the forms' results the diff
    # run left (the fixes they offer are kept with them) and lints only the files the diff did not
    cache = str(tmp_path_factory.mktemp("forms-cache"))
    diff = run_cli("--cache-dir", cache, "--diff", *FORMS, cwd=root)
    after_diff = {name: _read(tmp_path, name) for name in before}
    fix = run_cli("--cache-dir", cache, "--fix", "--show-fixes", ".", cwd=root)
    again = run_cli("--cache-dir", cache, "--diff", *FORMS, cwd=root)
    return tmp_path, before, diff, after_diff, fix, again


def test_fix_counts_each_files_fixes(fixed_forms):
    fix = fixed_forms[4]
    # the three weights used through a transpose keep their findings: their fixes are unsafe
    assert fix.returncode == 1, fix.stdout + fix.stderr
    # one a target: the two targets of leaky_matmul.py that share a line count twice
    assert _fixed_by_file(fix.stdout) == {"leaky_matmul.py": 2, "forms.py": 1, "leaky_linear.py": 1,
                                          "unused_suppression.py": 2}, fix.stdout
    # what a fix clears besides its own finding is not left: the refusal of a model fixed whole goes
    assert f"6 fixes applied, {3 + REFUSED} remaining." in fix.stdout
    assert fix.stdout.count("= fix (unsafe): use braintrace.matmul(") == 3


def test_diff_shows_the_fixes_and_writes_nothing(fixed_forms):
    _, before, diff, after_diff, _, _ = fixed_forms
    assert diff.returncode == 1, diff.stderr
    assert after_diff == before
    assert "+        self.h.value = 0.8 * self.h.value + braintrace.matmul(x, self.w_in.value)  # input drive" \
        in diff.stdout
    assert "+import braintrace\n" in diff.stdout
    assert "+        a = bt.matmul(x, self.w_dot.value)  # expect: ETL201" in diff.stdout


def test_fix_rewrites_each_plain_matmul_keeping_comments_and_layout(fixed_forms):
    tmp_path, before, _, _, fix, _ = fixed_forms
    assert fix.returncode == 1, fix.stdout + fix.stderr
    fixed = _fixed_by_file(fix.stdout)
    assert fixed["leaky_matmul.py"] + fixed["forms.py"] == 3  # one a target: two targets share a line
    leaky = _read(tmp_path, "leaky_matmul.py")
    compile(leaky, "leaky_matmul.py", "exec")
    # the import goes where isort sorts it, once for the two targets that share the line
    assert leaky.count("import braintrace\n") == 1
    assert "\nimport brainstate\nimport braintrace\nimport jax.numpy as jnp\n\nimport etrace_lint\n" in leaky
    assert "self.h.value = 0.8 * self.h.value + braintrace.matmul(x, self.w_in.value)  # input drive" in leaky
    forms = _read(tmp_path, "forms.py")
    assert "import braintrace as bt\n" in forms and "import braintrace\n" not in forms
    assert "a = bt.matmul(x, self.w_dot.value)  # expect: ETL201" in forms
    # a weight used through a transpose is left as it is: its fix is unsafe (see the next test)
    untouched = [line for line in before["forms.py"].splitlines() if "jnp.dot" not in line]
    assert all(line in forms.splitlines() for line in untouched)
    assert _rules_found(str(tmp_path / "forms.py")) == ["ETL201", "ETL201"]
    assert _rules_found(str(tmp_path / "leaky_matmul.py")) == []


def test_diff_on_a_fixed_tree_prints_nothing_and_exits_0(fixed_forms):
    again = fixed_forms[-1]
    assert again.returncode == 0, again.stderr
    assert again.stdout == ""


def test_fixed_weight_learns_online_like_bptt(fixed_forms):
    tmp_path = fixed_forms[0]
    path = str(tmp_path / "leaky_matmul.py")
    for spec in discover([path], str(tmp_path)).targets:
        result = lint_target(spec, str(tmp_path), EngineSettings(verify=True))
        # D-RTRL is exact for an element-wise recurrence: the fixed weight's online gradient is BPTT's
        rows = [r for r in result.verify_rows if r["weight"].startswith("w_in") and r["algorithm"] == "d_rtrl"]
        assert rows and all(r["verdict"] == "exact" and r["cosine"] > 0.999 for r in rows), rows
        assert all(r["onlineNorm"] > 0 for r in rows)
        assert not [f for f in result.findings if f.rule_id in ("ETL401", "ETL402", "ETL201")]


def test_linear_layer_becomes_braintraces_and_learns_online(fixed_forms):
    tmp_path = fixed_forms[0]
    root = str(tmp_path)
    assert _fixed_by_file(fixed_forms[4].stdout)["leaky_linear.py"] == 1
    text = _read(tmp_path, "leaky_linear.py")
    assert "self.fc = braintrace.nn.Linear(n_in, n, b_init=None)  # the input layer" in text
    assert "bst.nn.Linear" not in text
    (spec,) = discover([str(tmp_path / "leaky_linear.py")], root).targets
    verified = lint_target(spec, root, EngineSettings(verify=True))
    rows = [r for r in verified.verify_rows if r["weight"].startswith("fc") and r["algorithm"] == "d_rtrl"]
    assert rows and all(r["verdict"] == "exact" and r["onlineNorm"] > 0 for r in rows), rows
    assert not [f for f in verified.findings if f.rule_id in ("ETL201", "ETL402", "ETL401")]


def test_a_weight_used_through_a_transpose_is_not_fixed_by_default(fixed_forms, tmp_path):
    """``W @ x`` -> ``braintrace.matmul(x, W.T)`` computes the same numbers forward, but braintrace's op then
    sees the weight through the transpose: the probe measures the first online step raise for a non-square
    weight (ETL410), so the fix is unsafe, and --unsafe-fixes keeps it out after linting again."""
    forms, before_all, _, _, fix, _ = fixed_forms
    assert "weight_on_the_left.py" not in _fixed_by_file(fix.stdout)
    assert _read(forms, "weight_on_the_left.py") == before_all["weight_on_the_left.py"]
    root = _copy(tmp_path, "weight_on_the_left.py")
    unsafe = run_cli("--fix", "--unsafe-fixes", "--show-fixes", "weight_on_the_left.py", cwd=root)
    assert f"0 fixes applied, {1 + REFUSED} remaining." in unsafe.stdout, unsafe.stdout + unsafe.stderr
    assert _read(tmp_path, "weight_on_the_left.py") == before_all["weight_on_the_left.py"]
    (tmp_path / "transposed.py").write_text(before_all["weight_on_the_left.py"].replace(
        "self.w.value @ x", "braintrace.matmul(x, self.w.value.T)"), encoding="utf-8")
    transposed = run_cli("--output-format", "json", "transposed.py", cwd=root)
    assert [f["rule"] for f in json.loads(transposed.stdout)["findings"]] == ["ETL410"], transposed.stderr


def test_a_product_of_two_weights_is_sent_to_braintraces_lora_op_not_given_a_matmul_fix(tmp_path):
    # braintrace.matmul(self.w_a.value, self.w_b.value) would give the op a weight as its input; the fix is none,
    # and the advice is the LoRA op, which traces both factors (measured: both learn online under d_rtrl)
    root = _copy(tmp_path, "weight_product.py")
    findings, errors = lint_file(os.path.join(root, "weight_product.py"))
    assert not errors
    found = [f for f in findings if f.rule_id == "ETL201"]
    assert sorted(f.subject.weight for f in found) == ["w_a", "w_b"]
    assert all("use braintrace.lora_matmul(x, w_a, w_b)" in f.message and "braintrace.matmul(self.w_a" not in f.message
               for f in found)
    assert not [f for f in attach_fixes(found) if f.fix is not None]
    shown = run_cli("--show-fixes", "weight_product.py", cwd=root)
    assert "No fixes available." in shown.stdout, shown.stdout


def test_unused_suppressions_are_removed_and_the_rest_of_the_comment_kept(fixed_forms):
    tmp_path, _, _, _, fix, _ = fixed_forms
    assert _fixed_by_file(fix.stdout)["unused_suppression.py"] == 2
    text = _read(tmp_path, "unused_suppression.py")
    assert "drive = braintrace.matmul(x, self.w.value)  # the input drive\n" in text
    assert "self.h.value = 0.9 * self.h.value + drive\n" in text


def _settings(root: str) -> Settings:
    return Settings(paths=[root], root=root, use_cache=False, jobs=1)


def test_a_fix_that_breaks_the_file_is_not_written(tmp_path):
    root = _copy(tmp_path, "unused_suppression.py")
    path = str(tmp_path / "unused_suppression.py")
    before = _read(tmp_path, "unused_suppression.py")
    broken = Finding("ETL301", Level.WARNING, "unused", "", Location(path, 15, 53),
                     fix=Fix("break it", (Edit(path, 15, 9, 15, 14, "drive ="),)))
    report = run_fixes([broken], _settings(root), [], [], write=True, unsafe=False)
    assert report.applied == [] and "does not compile" in report.refused[0][1]
    assert _read(tmp_path, "unused_suppression.py") == before


def test_a_fix_that_adds_a_finding_is_not_written(tmp_path):
    root = _copy(tmp_path, "unused_suppression.py")
    path = str(tmp_path / "unused_suppression.py")
    before = _read(tmp_path, "unused_suppression.py")
    specs = discover([path], root).targets
    results = [lint_target(spec, root) for spec in specs]
    line = before.splitlines()[14]
    start = line.index("braintrace.matmul(x, self.w.value)") + 1
    # an edit that undoes the ETP op (and its comment): linting the edited source finds ETL201 again
    bad = Finding("ETL301", Level.WARNING, "unused", "", Location(path, 15, line.index("#") + 1),
                  subject=Subject(suppression_form="noqa", suppression_codes=("ETL201",)),
                  fix=Fix("plain matmul", (Edit(path, 15, start, 15, len(line) + 1, "x @ self.w.value"),)))
    report = run_fixes([bad], _settings(root), specs, results, write=True, unsafe=False)
    assert report.applied == []
    assert report.refused and "adds ETL201" in report.refused[0][1]
    assert _read(tmp_path, "unused_suppression.py") == before


def test_unsafe_fixes_wait_for_their_flag(tmp_path):
    path = str(tmp_path / "m.py")
    (tmp_path / "m.py").write_text("x = 1\n", encoding="utf-8")
    unsafe = Finding("ETL201", Level.WARNING, "m", "", Location(path, 1, 1),
                     fix=Fix("change it", (Edit(path, 1, 5, 1, 6, "2"),), "unsafe"))
    report = run_fixes([unsafe], _settings(str(tmp_path)), [], [], write=True, unsafe=False)
    assert report.unsafe_left == 1 and report.applied == []
    report = run_fixes([unsafe], _settings(str(tmp_path)), [], [], write=True, unsafe=True)
    assert len(report.applied) == 1 and _read(tmp_path, "m.py") == "x = 2\n"


def test_edits_keep_everything_outside_their_range():
    text = "a = f(x)  # keep\nb = 2\n"
    edits = [Edit("p", 1, 5, 1, 9, "g(x, y)"), Edit("p", 2, 1, 2, 1, "import braintrace\n")]
    assert apply_edits(text, edits) == "a = g(x, y)  # keep\nimport braintrace\nb = 2\n"
    with pytest.raises(ValueError):
        apply_edits(text, [Edit("p", 1, 1, 1, 6, "z"), Edit("p", 1, 3, 1, 8, "w")])


def test_every_rule_says_whether_it_has_a_fix():
    for rule in all_rules().values():
        if rule.retired:
            continue
        said = documented_fix(rule.docs)
        assert said == ("safe" if rule_has_fix(rule) else "none"), rule.id
    shown = run_cli("rule", "ETL201")
    assert shown.returncode == 0 and "Fix: safe" in shown.stdout
    assert "Fix: none" in run_cli("rule", "ETL005").stdout


IMPORT_PLACEMENT = {
    "among the third-party imports, in order": (
        '"""Doc."""\n\nimport os\n\nimport brainstate\nimport jax.numpy as jnp\n\nimport etrace_lint\n',
        '"""Doc."""\n\nimport os\n\nimport brainstate\nimport braintrace\nimport jax.numpy as jnp\n\n'
        'import etrace_lint\n'),
    "after the last straight import, before the from-imports": (
        "import brainstate\nfrom jax import numpy as jnp\n",
        "import brainstate\nimport braintrace\nfrom jax import numpy as jnp\n"),
    "first in its block": (
        "from __future__ import annotations\n\nimport jax\nimport numpy as np\n",
        "from __future__ import annotations\n\nimport braintrace\nimport jax\nimport numpy as np\n"),
    "a block of its own after the standard library": (
        "import os\nimport sys\n\nx = 1\n",
        "import os\nimport sys\n\nimport braintrace\n\nx = 1\n"),
    "the larger third-party block when blank lines split them": (
        "import os\n\nimport brainstate\nimport jax\n\nimport etrace_lint\n",
        "import os\n\nimport brainstate\nimport braintrace\nimport jax\n\nimport etrace_lint\n"),
}


@pytest.mark.parametrize("case", list(IMPORT_PLACEMENT))
def test_import_braintrace_goes_where_isort_puts_it(tmp_path, case):
    """The inserted import is where isort (and ruff's I001) would sort it, and isort agrees."""
    isort = pytest.importorskip("isort")
    from etrace_lint.fixes.source import ParsedSource

    before, expected = IMPORT_PLACEMENT[case]
    path = str(tmp_path / "model.py")
    config = isort.Config(known_first_party=["etrace_lint"], quiet=True)
    assert isort.check_code(before, config=config), "the table's input must be isort-clean"
    after = apply_edits(before, [ParsedSource(path, before).import_braintrace()])
    assert after == expected
    assert isort.check_code(after, config=config)
