"""The wheel carries the rules and their docs."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile

import pytest
from helpers import REPO

# what a source distribution of the project holds
SOURCES = ("pyproject.toml", "README.md", "etrace_lint", "rules")


def _build_backend_installed() -> bool:
    """pyproject.toml's build requirements: setuptools>=68 with a bdist_wheel command."""
    try:
        import setuptools
    except ImportError:
        return False
    major = int(setuptools.__version__.split(".")[0])
    if major < 68:
        return False
    return (importlib.util.find_spec("setuptools.command.bdist_wheel") is not None
            or importlib.util.find_spec("wheel") is not None)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    source.mkdir()
    for name in SOURCES:
        origin = os.path.join(REPO, name)
        if os.path.isdir(origin):
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(origin, source / name)
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check",
               "-w", str(work / "dist"), str(source)]
    if _build_backend_installed():
        command.insert(4, "--no-build-isolation")  # offline, and faster
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (built,) = (work / "dist").glob("etrace_lint-*.whl")
    return built


def test_wheel_contains_every_rule_with_its_docs(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    rule_files = sorted(f for f in os.listdir(os.path.join(REPO, "rules")) if f.startswith("etl"))
    assert rule_files
    for name in rule_files:
        assert f"etrace_lint/rules/{name}" in names
    assert "etrace_lint/writers/sarif.py" in names
    assert not any(name.startswith(("tests/", "examples/")) for name in names)
    for dirpath, dirnames, filenames in os.walk(os.path.join(REPO, "etrace_lint")):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            if name.endswith(".py"):
                rel = os.path.relpath(os.path.join(dirpath, name), REPO).replace(os.sep, "/")
                assert rel in names, f"{rel} is not in the wheel: list its package in pyproject.toml"


def test_installed_copy_reads_rule_docs(wheel, tmp_path):
    target = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--disable-pip-version-check",
                           "--target", str(target), str(wheel)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    probe = ("import etrace_lint, etrace_lint.rules as r; from etrace_lint.core.registry import all_rules; "
             "print(etrace_lint.__file__); print(r.__path__[0]); print(all_rules()['ETL005'].docs)")
    env = dict(os.environ, PYTHONPATH=str(target))
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    package, rules, docs = proc.stdout.split("\n", 2)
    assert package.startswith(str(target)) and rules.startswith(str(target))
    assert docs.startswith("# ETL005") and "## How to fix" in docs
    proc = subprocess.run([sys.executable, "-m", "etrace_lint", "rule", "ETL005"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "## Why it matters" in proc.stdout, proc.stderr


def test_only_the_rules_folder_of_a_checkout_belongs_to_the_package():
    code = ("import importlib, etrace_lint.rules\n"
            "for name in ('tests', 'bench', 'examples'):\n"
            "    try:\n"
            "        importlib.import_module('etrace_lint.' + name)\n"
            "    except ImportError:\n"
            "        continue\n"
            "    raise SystemExit('etrace_lint.' + name + ' imports')\n"
            "print(etrace_lint.rules.__path__[0])\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert os.path.basename(proc.stdout.strip()) == "rules"


def test_the_sarif_schema_is_the_upstream_file_its_note_names():
    """The schema the SARIF tests validate against lives in the repository, unmodified."""
    import hashlib
    import re

    from helpers import SARIF_SCHEMA

    with open(os.path.join(REPO, "tests", "data", "README.md"), encoding="utf-8") as handle:
        note = handle.read()
    documented = re.search(r"sha256: ([0-9a-f]{64})", note).group(1)
    with open(SARIF_SCHEMA, "rb") as handle:
        assert hashlib.sha256(handle.read()).hexdigest() == documented
    assert "oasis-tcs/sarif-spec" in note and "Licence" in note
    assert os.path.commonpath([SARIF_SCHEMA, REPO]) == REPO
