"""Snapshots of the JSON and SARIF that the bundled examples and the fixture corpus produce.

The snapshots pin every byte a user or a code-scanning service reads, so a change meant to
move code around, and not behaviour, shows up as a diff here. Only what legitimately varies
from one machine or one run to the next is normalised: the repository's absolute path, the
interpreter's prefix and the SARIF invocation's start and end times.

braintrace's messages differ between its release lines, so each installed version has its own
folder under ``tests/data/golden/``. Regenerate the snapshots of the installed version, from the
repository's root and with the checkout first on the path, with::

    PYTHONPATH=. python -m tests.golden --update
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata

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
                outputs[f"{corpus.name}.{suffix}"] = normalise(handle.read())
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.golden", description=__doc__.split("\n")[0])
    parser.add_argument("--update", action="store_true", help="rewrite the installed braintrace's snapshots")
    args = parser.parse_args(argv)
    if not args.update:
        parser.print_help()
        return 2
    for path in update():
        print(os.path.relpath(path, REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
