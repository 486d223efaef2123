"""Lint the model corpus (bench/corpus.py) as a user would and check that every way of running agrees.

    python bench/corpus_check.py [--keep DIR] [--only rnn/lstm_classifier.py ...]

Writes the corpus to a temporary folder and runs the ``etrace-lint`` of this
Python there: ``-j 1`` cold, ``-j 2`` cold, the files in reversed order, each
subfolder alone, and a cached rerun, all with ``--show-info`` and JSON output.
The findings and tool errors of every target must be identical across these
runs; any difference is printed and the script exits 1 (2 when a run gives
no results at all). It also prints the
exit code of a default run on the stock models that hold no real problem
(expected: 0), and every distinct finding message, flagging those that show
Python internals (a tuple path, a class repr, a braintrace primitive name).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from corpus import MODELS, problem_free, target_files, write_corpus  # noqa: E402

# each command line here runs in its own cold process tree: the project's daemon would serve it warm
os.environ["ETRACE_LINT_NO_DAEMON"] = "1"

# Message text a reader should never see: a Python tuple path, a class or object repr, a primitive's name.
UNCLEAR = [
    ("tuple path", re.compile(r"\('")),
    ("class repr", re.compile(r"<class ")),
    ("object repr", re.compile(r"<[A-Za-z_][\w.]* [^>]*>")),
    ("braintrace primitive", re.compile(r"ETP primitive|etp_[a-z]+\b")),
]


def etrace_lint_command() -> list[str]:
    """The console script installed beside this Python, as a user types it; else ``python -m``."""
    script = os.path.join(os.path.dirname(sys.executable), "etrace-lint")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "etrace_lint"]


class Run:
    def __init__(self, label: str, done: subprocess.CompletedProcess, seconds: float, document: dict | None):
        self.label, self.returncode, self.seconds = label, done.returncode, seconds
        self.stdout, self.stderr, self.document = done.stdout, done.stderr, document

    def per_target(self) -> dict[str, dict]:
        """Each target's findings and tool errors, in a canonical order, keyed by target name."""
        targets: dict[str, dict] = {}
        for kind in ("findings", "toolErrors"):
            for item in (self.document or {}).get(kind, []):
                entry = targets.setdefault(item["model"], {"findings": [], "toolErrors": []})
                entry[kind].append(json.dumps(item, sort_keys=True))
        for entry in targets.values():
            entry["findings"].sort()
            entry["toolErrors"].sort()
        return targets


def lint(label: str, root: str, args: list[str]) -> Run:
    command = etrace_lint_command() + args
    started = time.perf_counter()
    done = subprocess.run(command, cwd=root, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    try:
        document = json.loads(done.stdout) if "--output-format" in args else None
    except json.JSONDecodeError:
        document = None
    run = Run(label, done, seconds, document)
    shown = "" if document is None or "--output-format" not in args else (
        f", {len(document['findings'])} findings, {len(document['toolErrors'])} tool errors")
    print(f"  {label:<34} exit {done.returncode}  {seconds:6.1f} s{shown}", flush=True)
    return run


def compare(reference: Run, other: Run, only_models: set[str] | None = None) -> list[str]:
    """Lines describing every target whose results differ between two runs."""
    ours, theirs = reference.per_target(), other.per_target()
    models = set(ours) | set(theirs)
    if only_models is not None:
        models &= only_models
    differences = []
    for model in sorted(models):
        mine = ours.get(model, {"findings": [], "toolErrors": []})
        yours = theirs.get(model, {"findings": [], "toolErrors": []})
        for kind in ("findings", "toolErrors"):
            missing = sorted(set(mine[kind]) - set(yours[kind]))
            extra = sorted(set(yours[kind]) - set(mine[kind]))
            if missing or extra or len(mine[kind]) != len(yours[kind]):
                differences.append(f"{model}: {kind} differ in '{other.label}' "
                                   f"({len(mine[kind])} vs {len(yours[kind])})")
                for item in missing[:3]:
                    differences.append(f"    only in '{reference.label}': {_brief(item)}")
                for item in extra[:3]:
                    differences.append(f"    only in '{other.label}': {_brief(item)}")
    return differences


def _brief(item: str) -> str:
    data = json.loads(item)
    where = data["location"]
    return f"{data.get('rule', 'tool error')} {where['path']}:{where['line']} {data['message'][:160]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", metavar="DIR", help="write the corpus here and keep it (default: a temporary folder)")
    parser.add_argument("--only", nargs="+", metavar="FILE", help="only these corpus files (relative paths)")
    options = parser.parse_args(argv)

    root = os.path.abspath(options.keep) if options.keep else tempfile.mkdtemp(prefix="etrace-lint-corpus-")
    try:
        return check(root, options.only)
    finally:
        if not options.keep:
            shutil.rmtree(root, ignore_errors=True)


def check(root: str, only: list[str] | None) -> int:
    written = write_corpus(root, only)
    files = target_files(written)
    relative = [os.path.relpath(p, root) for p in files]
    folders = sorted({path.split(os.sep)[0] for path in relative})
    written_models = [m for m in MODELS if os.path.join(root, *m.path.split("/")) in files]
    per_library: dict[str, int] = {}
    for model in written_models:
        per_library[model.library] = per_library.get(model.library, 0) + len(model.targets)
    print(f"Python {sys.version.split()[0]}, {' '.join(etrace_lint_command())}")
    print(f"corpus in {root}: {len(files)} model files, {sum(per_library.values())} targets "
          f"({', '.join(f'{lib} {n}' for lib, n in sorted(per_library.items()))}), folders {', '.join(folders)}")

    json_args = ["--output-format", "json", "--show-info", "-q"]
    cache = os.path.join(root, ".cache-")
    print("runs:")
    linter_before = linter_source_stamp()
    reference = lint("-j 1, cold", root, [*json_args, "-j", "1", "--cache-dir", cache + "j1", *relative])
    # right after the cold run: etrace-lint's own source is part of the cache key
    cached = lint("cached rerun of -j 1", root, [*json_args, "-j", "1", "--cache-dir", cache + "j1", *relative])
    runs = [
        cached,
        lint("-j 2, cold", root, [*json_args, "-j", "2", "--cache-dir", cache + "j2", *relative]),
        lint("files reversed, -j 2, cold", root,
             [*json_args, "-j", "2", "--cache-dir", cache + "rev", *reversed(relative)]),
    ]
    alone = []
    for folder in folders:
        run = lint(f"{folder}/ alone, cold", root, [*json_args, "-j", "2", "--cache-dir", cache + folder, folder])
        alone.append((run, {name for m in written_models if m.path.split("/")[0] == folder for name in m.targets}))

    failed = [run for run in (reference, *runs, *(run for run, _ in alone)) if run.document is None]
    if failed:
        print("\nno results to compare from: " + "; ".join(
            f"'{run.label}' (exit {run.returncode}: {(run.stderr.strip().splitlines() or [''])[-1][:200]})"
            for run in failed))
        return 2

    differences = []
    for run in runs:
        if run.returncode != reference.returncode:
            differences.append(f"exit code {run.returncode} in '{run.label}', {reference.returncode} with -j 1")
        differences += compare(reference, run)
    for run, names in alone:
        differences += compare(reference, run, names)
        strays = set(run.per_target()) - names
        if strays:
            differences.append(f"'{run.label}' reports targets of other folders: {sorted(strays)}")

    clean = [os.path.relpath(p, root) for p in problem_free(written, root)]
    default = lint("default run, stock models without problems", root, ["--cache-dir", cache + "j2", *clean])
    linter_changed = linter_source_stamp() != linter_before

    print()
    targets = reference.per_target()
    errors = [json.loads(e) for entry in targets.values() for e in entry["toolErrors"]]
    print(f"{len(targets)} targets with results; {len(errors)} tool errors; "
          f"the cached rerun took {cached.seconds / max(reference.seconds, 1e-9):.2f}x the cold run")
    if cached.seconds > 0.3 * reference.seconds:
        print("  the cached rerun was not served from the cache")
    for error in errors:
        print(f"  tool error {error['location']['path']}::{error['model']}: {error['message'][:200]}")
    print(f"default run on {len(clean)} stock files without real problems: exit {default.returncode} (expected 0)")
    if default.returncode != 0:
        for line in (default.stdout + default.stderr).splitlines():
            if not line.startswith("  = "):
                print("   ", line)
    print_messages(reference)

    print()
    if linter_changed:
        print("etrace-lint's own source changed while this ran (a shared checkout?): "
              "results may differ for that reason alone")
    if differences:
        print(f"RESULTS DIFFER between runs ({len(differences)} lines):")
        for line in differences:
            print("  " + line)
        return 1
    print(f"identical findings and tool errors for every target across {len(runs) + len(alone) + 1} runs")
    return 0


def linter_source_stamp() -> str:
    """Names, sizes and times of etrace-lint's own files, to tell when it changed during the check."""
    import hashlib
    import importlib.util

    spec = importlib.util.find_spec("etrace_lint")
    folders = list(spec.submodule_search_locations or []) if spec else []
    # a source checkout keeps the rules beside the package
    folders += [os.path.join(os.path.dirname(f), "rules") for f in folders
                if os.path.isdir(os.path.join(os.path.dirname(f), "rules"))]
    digest = hashlib.sha256()
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(f for f in filenames if f.endswith(".py")):
                stat = os.stat(os.path.join(dirpath, name))
                digest.update(f"{dirpath}/{name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def print_messages(run: Run) -> None:
    """Every distinct message once, with its rule and how many targets show it; unclear ones flagged."""
    messages: dict[tuple[str, str], set[str]] = {}
    for item in (run.document or {}).get("findings", []):
        messages.setdefault((item["rule"], item["message"]), set()).add(item["model"])
    flagged = 0
    print(f"\n{len(messages)} distinct finding messages:")
    for (rule, message), models in sorted(messages.items()):
        flags = [name for name, pattern in UNCLEAR if pattern.search(message)]
        flagged += bool(flags)
        mark = f"  !! {', '.join(flags)}" if flags else ""
        print(f"  {rule} ({len(models)}x) {message}{mark}")
    print(f"{flagged} messages flagged as unclear")


if __name__ == "__main__":
    sys.exit(main())
