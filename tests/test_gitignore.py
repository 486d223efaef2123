"""``.gitignore`` files are read with git's rules: what etrace-lint lints in a tree is what git
does not ignore there, checked against git itself on a table of patterns."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from etrace_lint.cli import main as cli

GIT = shutil.which("git")
# git's own configuration must not add ignore files of its own (core.excludesFile)
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
TARGET = "def etrace_target_model():\n    pass\n"

# name -> ({.gitignore path: content}, python files in the tree)
CASES = {
    "a slash in the middle anchors, and * stops at a slash": (
        {".gitignore": "foo/*.py\n"},
        ["foo/x.py", "foo/bar/deep.py", "sub/foo/x.py"]),
    "negation re-includes a file": (
        {".gitignore": "*.py\n!keep.py\n"},
        ["drop.py", "keep.py", "sub/keep.py", "sub/drop.py"]),
    "a leading slash anchors to the .gitignore's folder": (
        {".gitignore": "/top.py\n"},
        ["top.py", "sub/top.py"]),
    "** matches any number of folders": (
        {".gitignore": "**/gen/*.py\na/**/z.py\n"},
        ["gen/g.py", "x/y/gen/g.py", "x/gen/deeper/g.py", "a/z.py", "a/b/c/z.py", "b/z.py"]),
    "a trailing slash matches folders only": (
        {".gitignore": "cache/\nmodel.py/\n"},
        ["cache/c.py", "sub/cache/c.py", "model.py", "cachefile.py"]),
    "a nested .gitignore applies to its folder and wins over its parent": (
        {".gitignore": "deep.py\n", "sub/.gitignore": "!deep.py\n/local.py\n"},
        ["deep.py", "sub/deep.py", "other/deep.py", "sub/local.py", "sub/inner/local.py", "local.py"]),
    "a file inside an ignored folder cannot be re-included": (
        {".gitignore": "data/\n!data/keep.py\n"},
        ["data/keep.py", "data/x.py", "keep.py"]),
    "character classes, ?, comments and escapes": (
        {".gitignore": "# a comment\nm[0-9].py\n?x.py\n\\#hash.py\nspace.py \n"},
        ["m1.py", "ma.py", "ax.py", "abx.py", "#hash.py", "space.py"]),
    "a name without a slash matches at any depth, folders too": (
        {".gitignore": "legacy\n"},
        ["legacy/old.py", "src/legacy/old.py", "src/legacy.py", "legacy.py"]),
}


def _git(*args: str, cwd) -> str:
    proc = subprocess.run([GIT, *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


def _listed(tree, capsys, monkeypatch, *args: str) -> set[str]:
    """The files of the targets ``etrace-lint --list-targets`` lists from ``tree`` (in this process:
    listing imports nothing, so no worker is involved)."""
    monkeypatch.chdir(tree)
    capsys.readouterr()
    assert cli.main([*args, "--list-targets", "--output-format", "json", "--isolated"]) == 0
    return {row["path"] for row in json.loads(capsys.readouterr().out)["targets"]}


def _tree(tmp_path, gitignores: dict, files: list[str]):
    _git("init", "-q", str(tmp_path), cwd=tmp_path)
    for name, content in gitignores.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content, encoding="utf-8")
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(TARGET, encoding="utf-8")
    return tmp_path


@pytest.mark.skipif(GIT is None, reason="needs git")
@pytest.mark.parametrize("case", list(CASES))
def test_linted_files_are_the_files_git_does_not_ignore(tmp_path, case, capsys, monkeypatch):
    gitignores, files = CASES[case]
    tree = _tree(tmp_path, gitignores, files)
    # what git keeps: untracked files not ignored, and each file's verdict from check-ignore
    kept = set(_git("ls-files", "--others", "--exclude-standard", "--", "*.py", cwd=tree).split())
    ignored = set(subprocess.run([GIT, "check-ignore", "--stdin"], cwd=tree, input="\n".join(files),
                                 capture_output=True, text=True, env={**os.environ, **GIT_ENV}).stdout.split())
    assert kept == set(files) - ignored, "git's two answers disagree: the table is wrong"
    assert ignored and kept, "each case must ignore some files and keep others"
    assert _listed(tree, capsys, monkeypatch) == kept


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_a_folder_named_on_the_command_line_is_linted_inside_an_ignored_one(tmp_path, capsys, monkeypatch):
    tree = _tree(tmp_path, {".gitignore": "experiments/\n*_scratch.py\n"},
                 ["experiments/run.py", "experiments/try_scratch.py", "src/model.py"])
    assert _listed(tree, capsys, monkeypatch, "experiments") == {"experiments/run.py"}
