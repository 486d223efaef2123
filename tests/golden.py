"""Snapshots of the JSON and SARIF that the bundled examples and the fixture corpus produce.

The snapshots pin what the linter does, every finding as a user or a code-scanning service reads
it, so a change meant to move code around, and not behaviour, shows up as a diff here. What
legitimately varies from one machine or one run to the next is normalised: the repository's
absolute path, the interpreter's prefix and the SARIF invocation's start and end times. So is
what documents the rules rather than what they found: the SARIF log's ``tool.driver.rules``
keeps only the rules its results name, by id, name and level, without their texts, and a
result keeps its ``ruleId`` without its ``ruleIndex`` (checked to point at that rule first). A
rule's Markdown, or a new rule that fires on no model of the corpus, changes no snapshot;
tests/test_sarif.py and tests/test_sarif_limits.py check the rules' texts in the log.

braintrace's messages differ between its release lines, so each line has its own folder under
``tests/data/golden/``: 0.2.6, the newest braintrace for Python 3.11, and 0.2.8, which needs
Python 3.12. Regenerate the snapshots of both lines, from the repository's root, with::

    python -m tests.golden --update --all-lines

The installed braintrace's line is written by this interpreter; the other line's by the
interpreter of a virtual environment that has it (``.venv312/`` for 0.2.8, made and installed
with the checkout on first use from a Python 3.12 found on the PATH or by pyenv; or name one:
``--python 0.2.8=/path/to/bin/python``). ``--update`` alone writes the installed line's only;
``--summary`` adds the counts that changed, one line per finding the snapshots gained or lost and one per SARIF rule
entry added or gone, against the commit checked out.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(REPO, "tests", "data", "golden")


@dataclass(frozen=True)
class Corpus:
    """One CLI run: its name (the snapshots' stem) and the paths it lints, relative to the repository."""

    name: str
    paths: tuple[str, ...]


FIXTURES = "tests/fixtures"
CORPORA = (
    Corpus("examples", ("examples/models",)),
    # every fixture folder a lint of the corpus covers, without the models that hang or wait on a
    # timeout (their wording depends on the clock) and without the server's and hermetic tests' trees
    Corpus("fixtures", tuple(f"{FIXTURES}/{part}" for part in (
        "clean", "compiler", "own", "probe", "verify",
        "daily/clean.py", "daily/layers.py", "daily/leaky.py", "daily/suppressed.py",
        "bad/broken_factories.py", "bad/crashes.py", "bad/import_error.py", "bad/syntax_error.py",
    ))),
)
# no probe: its jitted steps cost many times a compile and tests/test_probe.py pins what it says
OPTIONS = ("--show-info", "--include-suppressed", "--no-cache", "--no-probe", "-q")
TIMES = re.compile(r'"(startTimeUtc|endTimeUtc)": "[^"]*"')


@dataclass(frozen=True)
class Line:
    """A braintrace release line the snapshots are kept for, the Python it installs on, and the virtual
    environment (relative to the repository) that ``--all-lines`` writes its snapshots with when the
    running interpreter has another braintrace."""

    braintrace: str
    python: str
    venv: str


LINES = (Line("0.2.6", "3.11", ".venv"), Line("0.2.8", "3.12", ".venv312"))


def braintrace_version() -> str:
    return metadata.version("braintrace")


def snapshot_folder(version: str | None = None) -> str:
    return os.path.join(GOLDEN, f"braintrace-{version or braintrace_version()}")


def normalise(text: str) -> str:
    """The text with this checkout's and this interpreter's paths and the run's times replaced."""
    for path, name in ((REPO, "<repo>"), (os.path.realpath(REPO), "<repo>"),
                       (sys.prefix, "<prefix>"), (os.path.realpath(sys.prefix), "<prefix>")):
        text = text.replace(path, name)
    return TIMES.sub(lambda match: f'"{match.group(1)}": "<time>"', text)


def behaviour_of_sarif(text: str) -> str:
    """A SARIF log less its rules' documentation: ``tool.driver.rules`` keeps the rules its results name,
    by id, name and default level, and each result its ``ruleId`` but not its ``ruleIndex``, once checked
    to point at the rule of that id (a wrong index is a bug this snapshot still catches)."""
    log = json.loads(text)
    for run in log.get("runs", []):
        driver = run["tool"]["driver"]
        rules = driver.get("rules", [])
        named = set()
        for result in run.get("results", []):
            index = result.pop("ruleIndex", None)
            if index is not None and (index >= len(rules) or rules[index]["id"] != result["ruleId"]):
                raise ValueError(f"a {result['ruleId']} result's ruleIndex {index} points at another rule")
            named.add(result["ruleId"])
        driver["rules"] = [_rule_behaviour(rule) for rule in rules if rule["id"] in named]
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _rule_behaviour(rule: dict[str, Any]) -> dict[str, Any]:
    return {key: rule[key] for key in ("id", "name", "defaultConfiguration") if key in rule}


def produce(corpus: Corpus) -> dict[str, str]:
    """The normalised JSON and SARIF of one CLI run over the corpus, keyed by file name."""
    with tempfile.TemporaryDirectory(prefix="etrace-lint-golden-") as out:
        json_path = os.path.join(out, "out.json")
        sarif_path = os.path.join(out, "out.sarif")
        done = subprocess.run(
            [sys.executable, "-m", "etrace_lint", *OPTIONS, "--output-format", "json", "-o", json_path,
             "--sarif", sarif_path, *corpus.paths],
            cwd=REPO, capture_output=True, text=True, timeout=900)
        if done.returncode not in (0, 1, 2) or not os.path.exists(sarif_path):
            raise RuntimeError(f"etrace-lint exited {done.returncode}: {done.stderr[-2000:]}")
        outputs = {}
        for suffix, path in (("json", json_path), ("sarif", sarif_path)):
            with open(path, encoding="utf-8") as handle:
                text = normalise(handle.read())
            outputs[f"{corpus.name}.{suffix}"] = behaviour_of_sarif(text) if suffix == "sarif" else text
        outputs[f"{corpus.name}.exit"] = f"{done.returncode}\n"
        return outputs


def stored(name: str, version: str | None = None) -> str | None:
    path = os.path.join(snapshot_folder(version), name)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def update() -> list[str]:
    """Rewrite the installed braintrace's snapshots; returns the paths written."""
    folder = snapshot_folder()
    os.makedirs(folder, exist_ok=True)
    written = []
    for corpus in CORPORA:
        for name, text in produce(corpus).items():
            path = os.path.join(folder, name)
            with open(path, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
            written.append(path)
    return written


def _python_of(line: Line) -> str | None:
    """An interpreter of the line's Python: ``python3.12`` on the PATH, else one pyenv installed."""
    found = shutil.which(f"python{line.python}")
    if found and subprocess.run([found, "-c", ""], capture_output=True).returncode == 0:
        return found
    pyenv_root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    pattern = os.path.join(pyenv_root, "versions", f"{line.python}.*", "bin", f"python{line.python}")
    versions = sorted(glob.glob(pattern))
    return versions[-1] if versions else None


def _venv_python(line: Line) -> str:
    """The Python of the line's virtual environment, made and installed with the checkout if missing."""
    venv = os.path.join(REPO, line.venv)
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        base = _python_of(line)
        if base is None:
            raise SystemExit(f"braintrace {line.braintrace} needs Python {line.python}, and none is on the PATH or "
                             f"in pyenv: install one, or name a Python that has braintrace {line.braintrace} with "
                             f"--python {line.braintrace}=PATH")
        print(f"making {line.venv} with {base} for braintrace {line.braintrace} (a few minutes, once)", flush=True)
        subprocess.run([base, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "-e", f"{REPO}[test]",
                        f"braintrace=={line.braintrace}"], check=True)
    return python


def update_line(line: Line, python: str | None) -> list[str]:
    """Rewrite one line's snapshots, in this process when its braintrace is the installed one, else with
    ``python`` (or the line's virtual environment); returns the paths written."""
    if python is None and braintrace_version() == line.braintrace:
        return update()
    python = python or _venv_python(line)
    done = subprocess.run([python, "-c", "from importlib import metadata; print(metadata.version('braintrace'))"],
                          capture_output=True, text=True, check=True)
    if done.stdout.strip() != line.braintrace:
        raise SystemExit(f"{python} has braintrace {done.stdout.strip()}, not {line.braintrace}")
    env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}
    # its own list of what it wrote is the one returned here
    subprocess.run([python, "-m", "tests.golden", "--update"], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
    return [os.path.join(snapshot_folder(line.braintrace), f"{corpus.name}.{suffix}")
            for corpus in CORPORA for suffix in ("json", "sarif", "exit")]


def _findings_of(text: str) -> set[tuple[str, int, str, str, str]]:
    """(path, line, rule, level, message) of each finding of a JSON snapshot."""
    if not text:
        return set()
    return {(f["location"]["path"], f["location"]["line"], f["rule"], f["level"], f["message"])
            for f in json.loads(text).get("findings", [])}


def _counts_of(text: str) -> dict[str, int]:
    """The run's counts (files, models, findings, tool errors) of a JSON snapshot."""
    return dict(json.loads(text).get("summary", {})) if text else {}


def _rules_of(text: str) -> set[str]:
    """The ids of a SARIF snapshot's ``tool.driver.rules`` entries (the rules its results name)."""
    if not text:
        return set()
    return {rule["id"] for run in json.loads(text).get("runs", []) for rule in run["tool"]["driver"].get("rules", [])}


def snapshot_changes(relative: str, old: str, text: str) -> list[str]:
    """What the snapshot ``relative`` says now (``text``) differently from before (``old``, "" where new): for
    a JSON snapshot, its counts that changed and one line per finding added (+) or gone (-); for a SARIF log,
    each rule entry added to or gone from ``tool.driver.rules``."""
    lines = []
    if relative.endswith(".sarif"):
        now_rules, old_rules = _rules_of(text), _rules_of(old)
        for sign, ids in (("-", old_rules - now_rules), ("+", now_rules - old_rules)):
            lines.extend(f"{relative}: {sign} rule entry {rule}" for rule in sorted(ids))
        return lines
    counts, old_counts = _counts_of(text), _counts_of(old)
    moved = [f"{key} {old_counts.get(key, 0)} -> {value}" for key, value in sorted(counts.items())
             if old_counts.get(key, 0) != value]
    if moved:
        lines.append(f"{relative}: counts: {', '.join(moved)}")
    now, before = _findings_of(text), _findings_of(old)
    for sign, found in (("-", before - now), ("+", now - before)):
        lines.extend(f"{relative}: {sign} {p}:{n} {rule} {level} {message[:100]}"
                     for p, n, rule, level, message in sorted(found))
    details = _changed_in_details(old, text)
    if details:
        lines.append(f"{relative}: {details} finding(s) kept their line, rule and message but changed in a column, "
                     f"a related location or a property (git diff shows them)")
    return lines


def _changed_in_details(old: str, text: str) -> int:
    """How many findings of ``old`` are gone from ``text`` whole although one with the same path, line, rule,
    level and message is still there: those that moved within their line or whose related locations or
    properties changed."""
    if not old or not text:
        return 0
    before, now = json.loads(old).get("findings", []), json.loads(text).get("findings", [])
    kept = _findings_of(text)
    left = collections.Counter(json.dumps(f, sort_keys=True) for f in now)
    changed = 0
    for finding in before:
        whole = json.dumps(finding, sort_keys=True)
        if left[whole]:
            left[whole] -= 1
        elif (finding["location"]["path"], finding["location"]["line"], finding["rule"], finding["level"],
              finding["message"]) in kept:
            changed += 1
    return changed


def changes(paths: list[str]) -> list[str]:
    """What each JSON snapshot and SARIF log of ``paths`` says differently from the commit checked out
    (``snapshot_changes``), so a diff of hundreds of lines reads as the findings it is about."""
    lines = []
    for path in sorted(p for p in paths if p.endswith((".json", ".sarif"))):
        relative = os.path.relpath(path, REPO)
        old = subprocess.run(["git", "show", f"HEAD:{relative}"], cwd=REPO, capture_output=True, text=True).stdout
        with open(path, encoding="utf-8") as handle:
            lines += snapshot_changes(relative, old, handle.read())
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.golden", description=__doc__.split("\n")[0])
    parser.add_argument("--update", action="store_true", help="rewrite the installed braintrace's snapshots")
    parser.add_argument("--all-lines", action="store_true",
                        help="with --update: rewrite every braintrace line's snapshots (" +
                             ", ".join(f"{line.braintrace} on Python {line.python}" for line in LINES) + ")")
    parser.add_argument("--python", action="append", default=[], metavar="VERSION=PATH",
                        help="the Python to write braintrace VERSION's snapshots with (default: its line's venv)")
    parser.add_argument("--summary", action="store_true",
                        help="with --update: print the counts that changed, each finding the snapshots gained (+) or "
                             "lost (-) and each SARIF rule entry added or gone, against HEAD")
    args = parser.parse_args(argv)
    if not args.update:
        parser.print_help()
        return 2
    pythons = dict(item.split("=", 1) for item in args.python)
    written = []
    if args.all_lines:
        for line in LINES:
            written += update_line(line, pythons.get(line.braintrace))
    else:
        written = update()
    for path in written:
        print(os.path.relpath(path, REPO))
    if args.summary:
        print("\n".join(changes(written)) or "no finding changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
