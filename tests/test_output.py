"""What a user sees: text, json and github output, flags that shape them, exit codes, rule docs.

One lint of a small project fills a cache; the CLI is then run in-process
against it with different flags (policy and writers only), and twice as a
real process to check that ``python -m etrace_lint`` and the script agree.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from etrace_lint.analysis import braintrace_adapter
from etrace_lint.cli import main as cli
from etrace_lint.core.findings import Finding, Level, Location, ToolError
from etrace_lint.core.registry import all_rules
from etrace_lint.policy.decide import Outcome
from etrace_lint.writers import RunInfo
from etrace_lint.writers.github import write_github

GATED = textwrap.dedent('''
    """A hand-written gated RNN and braintrace's LSTM."""

    import braintrace
    import brainstate
    import jax
    import jax.numpy as jnp


    class GatedRNN(brainstate.nn.Module):
        def __init__(self, n_in=3, n=4):
            super().__init__()
            self.Wz = braintrace.nn.Linear(n_in + n, n)
            self.Wr = braintrace.nn.Linear(n_in + n, n)
            self.Wh = braintrace.nn.Linear(n_in + n, n)
            self.h = brainstate.HiddenState(jnp.zeros((n,)))

        def update(self, x):
            xh = jnp.concatenate([x, self.h.value])
            z = jax.nn.sigmoid(self.Wz(xh))
            r = jax.nn.sigmoid(self.Wr(xh))  # the reset gate
            cand = jnp.tanh(self.Wh(jnp.concatenate([x, r * self.h.value])))
            self.h.value = (1 - z) * self.h.value + z * cand
            return self.h.value


    def etrace_target_gated():
        return GatedRNN(), (jnp.ones((3,)),)


    def etrace_target_lstm():
        return braintrace.nn.LSTMCell(3, 4), (jnp.ones((3,)),)
''')
BROKEN = textwrap.dedent('''
    def etrace_target_broken():
        raise RuntimeError("no data on this machine")
''')
LINE_RE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): "
                     r"(?P<rule>ETL\d{3}) (?P<msg>.*) \[(?P<model>[^\]]+)\]$")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("project")
    (root / "models").mkdir()
    (root / "models" / "net.py").write_text(GATED, encoding="utf-8")
    (root / "broken").mkdir()
    (root / "broken" / "data.py").write_text(BROKEN, encoding="utf-8")
    (root / "helpers").mkdir()
    (root / "helpers" / "io.py").write_text("def load():\n    return None\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def lint(project):
    """``lint(*args) -> (exit code, stdout, stderr)``, in-process, from the project folder."""
    cache = str(project / ".cache")

    def run(*args: str):
        cwd = os.getcwd()
        out, err = _Capture(), _Capture()
        saved = sys.stdout, sys.stderr
        os.chdir(project)
        sys.stdout, sys.stderr = out, err
        try:
            # --no-probe unless a test asks for the probe: the formats are what these tests read; the
            # probe's LSTM verdicts in every format are tests/test_one_answer.py's
            probe = [] if "--probe" in args else ["--no-probe"]
            code = cli.main([*args, "--isolated", "--cache-dir", cache, "-j", "1", *probe])
        finally:
            sys.stdout, sys.stderr = saved
            os.chdir(cwd)
        return code, out.getvalue(), err.getvalue()

    run("models", "broken")  # fills the cache: later runs only apply policy and write
    return run


class _Capture:
    def __init__(self):
        self.parts = []

    def write(self, text):
        self.parts.append(text)
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False

    def getvalue(self):
        return "".join(self.parts)


def _wr_line() -> int:
    return next(i for i, line in enumerate(GATED.splitlines(), start=1) if "the reset gate" in line)


def _finding_lines(stdout: str) -> list[re.Match]:
    return [m for m in map(LINE_RE.match, stdout.splitlines()) if m]


def test_text_format_and_summary(lint):
    code, out, _ = lint("models")
    assert code == 1
    (finding,) = _finding_lines(out)
    assert finding["path"] == "models/net.py"
    assert (int(finding["line"]), finding["rule"], finding["model"]) == (_wr_line(), "ETL005", "etrace_target_gated")
    assert int(finding["col"]) >= 1
    summary = out.strip().splitlines()[-1]
    assert re.fullmatch(r"Found 1 finding \(1 warning\) in 2 models\. \d+ notes hidden \(--show-info\)\.", summary)


def test_related_locations_are_printed_under_their_finding(lint):
    code, out, _ = lint("models")
    lines = out.splitlines()
    (index,) = [i for i, line in enumerate(lines) if LINE_RE.match(line)]
    related = []
    for line in lines[index + 1:]:
        if not line.startswith("  = "):
            break
        label, _, where = line[4:].rpartition(": ")
        related.append((label, where))
    source = GATED.splitlines()
    factory = next(i for i, text in enumerate(source, start=1) if "def etrace_target_gated" in text)
    created = next(i for i, text in enumerate(source, start=1) if "self.Wr = " in text)
    assert ("target factory", f"models/net.py:{factory}:1") in related
    # the line to edit is visible without JSON or SARIF: where the excluded weight is created
    assert any(label.startswith("Wr") and where.startswith(f"models/net.py:{created}:") for label, where in related)
    assert lines[index + 1 + len(related)].startswith("Found 1 finding")


def test_concise_keeps_one_line_a_finding(lint):
    code, out, _ = lint("models", "--output-format", "concise")
    lines = out.splitlines()
    assert code == 1 and len(lines) == 2
    assert LINE_RE.match(lines[0])["rule"] == "ETL005" and lines[1].startswith("Found 1 finding")


def test_statistics_count_findings_per_rule(lint):
    _, shown, _ = lint("models", "--show-info", "--output-format", "concise")
    expected = {}
    for match in _finding_lines(shown):
        expected[match["rule"]] = expected.get(match["rule"], 0) + 1
    code, out, _ = lint("models", "--show-info", "--statistics")
    lines = out.splitlines()
    assert code == 1 and lines[-1] == shown.splitlines()[-1]  # the same summary
    rows = [line.split("\t") for line in lines[:-1]]
    assert {code: int(count.strip()) for count, code, _ in rows} == expected
    assert [int(count) for count, _, _ in rows] == sorted(expected.values(), reverse=True)
    assert ["1", "ETL005", "weight-to-weight-exclusion"] in [[c.strip(), r, n] for c, r, n in rows]
    _, out, _ = lint("models", "--show-info", "--statistics", "--output-format", "json")
    assert {row["code"]: row["count"] for row in json.loads(out)} == expected
    code, _, err = lint("models", "--statistics", "--output-format", "sarif")
    assert code == 2 and "--statistics" in err


def test_a_path_without_targets_is_named_in_a_warning(lint):
    code, out, err = lint("helpers")
    assert code == 0
    assert "warning" in err and "helpers" in err and "no lint target" in err
    assert out.strip() == "Found 0 findings in 0 models."
    code, _, err = lint("models", "helpers/io.py")
    assert code == 1 and "helpers/io.py" in err and "models" not in err
    assert "warning" not in lint("helpers", "-q")[2]


def test_a_helper_named_on_the_command_line_is_linted_through_its_importers(tmp_path, monkeypatch, capsys):
    """pre-commit names a changed helper module: the targets importing it are linted, nothing is warned."""
    (tmp_path / "_sizes.py").write_text("N_IN, N = 3, 4\n", encoding="utf-8")
    (tmp_path / "lstm.py").write_text(
        "import braintrace\nimport jax.numpy as jnp\n\nfrom _sizes import N, N_IN\n\n\n"
        "def etrace_target_lstm():\n    return braintrace.nn.ValinaRNNCell(N_IN, N), (jnp.ones((N_IN,)),)\n",
        encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["lstm.py", "--isolated", "-j", "1"]) == 0  # records what lstm.py imports
    capsys.readouterr()
    assert cli.main(["_sizes.py", "--isolated", "-j", "1"]) == 0
    out, err = capsys.readouterr()
    assert "in 1 model." in out and "warning" not in err
    assert cli.main(["_sizes.py", "--isolated", "-j", "1", "--no-cache"]) == 0  # no importer known
    assert "warning: no lint target in _sizes.py" in capsys.readouterr().err


def test_show_info_adds_the_notes(lint):
    code, out, _ = lint("models", "--show-info")
    assert code == 1
    rules = [m["rule"] for m in _finding_lines(out)]
    assert rules.count("ETL001") >= 6 and "ETL005" in rules
    assert "hidden" not in out.splitlines()[-1]
    assert re.search(r"Found \d+ findings \(1 warning, \d+ notes\) in 2 models\.$", out.strip())


def test_hidden_notes_are_counted_as_if_shown(lint):
    # a default run leaves notes unbuilt; its count must match what --show-info then shows
    _, hidden_run, _ = lint("models", "--no-cache")
    hidden = int(re.search(r"(\d+) notes hidden", hidden_run)[1])
    _, shown, _ = lint("models", "--show-info", "--output-format", "json")
    notes = [f for f in json.loads(shown)["findings"] if f["level"] == "note"]
    assert hidden == len(notes) >= 6


def test_a_note_raised_by_configuration_is_shown_without_show_info(project, tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.etrace-lint.levels]\nETL001 = "warning"\n', encoding="utf-8")
    code = cli.main([str(project / "models" / "net.py"), "--config", str(config), "--no-cache", "-j", "1", "-q",
                     "--output-file", str(tmp_path / "out.txt")])
    rules = [m["rule"] for m in _finding_lines((tmp_path / "out.txt").read_text(encoding="utf-8"))]
    assert code == 1 and rules.count("ETL001") >= 6


def test_quiet_prints_findings_only(lint):
    code, out, err = lint("models", "-q")
    assert code == 1
    assert [m["rule"] for m in _finding_lines(out)] == ["ETL005"]
    assert len(out.splitlines()) == 1 and "Found" not in out + err


def test_exit_codes(lint):
    assert lint("models", "--exit-zero")[0] == 0
    assert lint("models", "--fail-level", "error")[0] == 0
    assert lint("models", "--fail-level", "note", "--show-info", "--ignore", "ETL005")[0] == 1
    code, out, _ = lint("models", "broken")
    assert code == 2
    assert "no data on this machine" in out and "broken/data.py" in out
    # the models linted and the targets that could not be are counted apart
    assert out.strip().splitlines()[-1].startswith(
        "Found 1 finding (1 warning) in 2 models. 1 target could not be linted.")
    assert lint("models", "broken", "--exit-zero")[0] == 2  # a tool error is never hidden
    code, _, err = lint("models", "--select", "ETL5")
    assert code == 2 and "unknown rule" in err and "ETL5" in err


def test_select_and_ignore(lint):
    code, out, _ = lint("models", "--ignore", "ETL005")
    assert code == 0 and _finding_lines(out) == []
    code, out, _ = lint("models", "--select", "ETL001", "--show-info")
    assert code == 0
    assert {m["rule"] for m in _finding_lines(out)} == {"ETL001"}
    code, out, _ = lint("models", "--select", "weight-to-weight-exclusion")
    assert code == 1 and [m["rule"] for m in _finding_lines(out)] == ["ETL005"]


def test_json_format(lint):
    code, out, _ = lint("models", "broken", "--output-format", "json")
    assert code == 2
    document = json.loads(out)
    (finding,) = document["findings"]
    assert finding["rule"] == "ETL005" and finding["level"] == "warning"
    source_line = GATED.splitlines()[_wr_line() - 1]
    assert finding["location"] == {"path": "models/net.py", "line": _wr_line(),
                                   "column": source_line.index("self.Wr(") + 1}  # the call that uses the weight
    assert finding["model"] == "etrace_target_gated"
    (error,) = document["toolErrors"]
    assert error["location"]["path"] == "broken/data.py" and error["model"] == "etrace_target_broken"
    assert document["summary"]["toolErrors"] == 1


def test_github_format(lint):
    code, out, _ = lint("models", "--output-format", "github", "--show-info", "--probe")
    assert code == 1
    lines = out.splitlines()
    warning = [line for line in lines if line.startswith("::warning ")]
    # the GitHub format runs the learning-signal probe: LSTMCell's Wi, Wg and Wf are 2.00x BPTT's at one step, a
    # notice (braintrace's doing), and Wr's measured zero confirms ETL005, which keeps the weight's one warning
    assert warning == [line for line in lines if "title=ETL005" in line]
    assert sorted(line.split("title=")[1][:6] for line in lines if line.startswith("::notice ")
                  and "title=ETL412" in line) == ["ETL412"] * 3
    (excluded,) = [line for line in warning if "title=ETL005" in line]
    assert excluded.startswith(f"::warning file=models/net.py,line={_wr_line()},col=")
    assert all(line.startswith(("::notice ", "::warning ")) for line in lines)


def _parse_command(line: str) -> tuple[str, dict, str]:
    """Undo the Actions toolkit's escaping, as the runner does."""
    def unescape(text):
        return (text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":")
                .replace("%2C", ",").replace("%25", "%"))

    head, _, data = line[2:].partition("::")
    kind, _, props = head.partition(" ")
    pairs = dict(p.split("=", 1) for p in props.split(","))
    return kind, {k: unescape(v) for k, v in pairs.items()}, unescape(data)


def test_github_escapes_what_would_end_the_command(tmp_path):
    path = tmp_path / "odd, name:v2.py"
    message = "100% of h::c\nsecond line\r\nthird, done"
    finding = Finding("ETL005", Level.NOTE, message, "m", Location(str(path), 7, 3))
    error = ToolError("t", "bad\nimport: 50%", Location(str(path), 1))
    buffer = _Capture()
    write_github(Outcome(findings=[finding], tool_errors=[error]), RunInfo(root=str(tmp_path)), buffer)
    lines = buffer.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[1] == ("::notice file=odd%2C name%3Av2.py,line=7,col=3,title=ETL005::"
                        "100%25 of h::c%0Asecond line%0D%0Athird, done [m]")
    kind, props, data = _parse_command(lines[1])
    assert (kind, props["file"], props["line"], data) == ("notice", "odd, name:v2.py", "7", message + " [m]")
    kind, props, data = _parse_command(lines[0])
    assert kind == "error" and data == "bad\nimport: 50% [t]"


def test_rule_and_rules_subcommands(lint, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a folder named "rules" would be linted instead
    assert cli.main(["rule", "ETL005"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ETL005 weight-to-weight-exclusion (warning)")
    for section in ("## What it does", "## Why it matters", "## Example", "## How to fix"):
        assert section in out
    assert cli.main(["rule", "weight-to-weight-exclusion"]) == 0
    assert capsys.readouterr().out == out
    assert cli.main(["rule", "ETL9999"]) == 2
    assert "unknown rule" in capsys.readouterr().err
    assert cli.main(["rules"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == list(all_rules())
    assert cli.main(["rules", "--format", "markdown"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("| Rule |") and any(row.startswith("| ETL005 |") for row in table)


def test_module_and_script_agree(lint, project):
    script = shutil.which("etrace-lint", path=os.path.dirname(sys.executable))
    assert script, "the etrace-lint script is not installed next to this Python"
    args = ["models", "broken", "--isolated", "--cache-dir", str(project / ".cache"), "--show-info"]
    env = dict(os.environ, NO_COLOR="1")
    as_module = subprocess.run([sys.executable, "-m", "etrace_lint", *args], cwd=project, env=env,
                               capture_output=True, text=True, timeout=300)
    as_script = subprocess.run([script, *args], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert as_module.returncode == as_script.returncode == 2
    assert as_module.stdout == as_script.stdout
    assert "ETL005" in as_module.stdout and "etrace_target_broken" in as_module.stdout


# what each bundled example is there to show (warnings and errors; notes aside)
EXAMPLES_SHOW = {
    ("gru.py", "ETL005"), ("plain_matmul_rnn.py", "ETL201"), ("scan_in_step.py", "ETL016"),
    ("hebbian_in_step.py", "ETL102"), ("units_mismatch.py", "ETL101"),
}  # --sarif runs the learning-signal probe: LSTMCell's Wi, Wg and Wf are 2.00x BPTT's at one step, a note (ETL412),
# and static_readout.py's readout learns exactly from same-step gradients, a note (ETL003): neither is shown
if not braintrace_adapter.adds_same_step_gradients():  # braintrace 0.2.6: that readout gets no online gradient
    EXAMPLES_SHOW |= {("static_readout.py", "ETL209")}  # the probe's measured zero folds into it


def test_readme_quickstart_lints_the_examples(tmp_path, monkeypatch, capsys):
    """``etrace-lint examples/models --sarif out.sarif``, as the README's first command runs it."""
    from helpers import REPO, sarif_validator

    sarif = tmp_path / "out.sarif"
    monkeypatch.chdir(REPO)
    code = cli.main(["examples/models", "--sarif", str(sarif), "--output-format", "json",
                     "--isolated", "--no-cache"])
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    assert document["toolErrors"] == []
    shown = {(os.path.basename(f["location"]["path"]), f["rule"]) for f in document["findings"]}
    assert shown == EXAMPLES_SHOW
    log = json.loads(sarif.read_text(encoding="utf-8"))
    sarif_validator().validate(log)
    assert {r["ruleId"] for r in log["runs"][0]["results"]} == {rule for _, rule in EXAMPLES_SHOW}
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True
