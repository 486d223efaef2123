"""Files and ``path::factory`` arguments -> lint targets, without importing anything.

Targets are found statically (with :mod:`ast`) so that a cached run can decide
what to lint without importing JAX: functions decorated with
``@etrace_lint.target`` (bare or called) and top-level functions whose name
starts with ``etrace_target``.
"""

from __future__ import annotations

import ast
import fnmatch
import os
from dataclasses import dataclass, field
from typing import Iterator

import pathspec

from ..core.findings import Location, ToolError

TARGET_PREFIX = "etrace_target"
DEFAULT_EXCLUDES = (".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", ".nox",
                    "build", "dist", "node_modules", "site-packages", ".etrace-lint-cache",
                    ".mypy_cache", ".pytest_cache", ".ruff_cache", "*.egg-info")


@dataclass(frozen=True)
class TargetSpec:
    """One factory to lint: the file it lives in and the function's name."""

    path: str  # absolute
    factory: str
    line: int = 1
    name: str = ""  # the display name; the factory's name unless the decorator names it

    @property
    def display_name(self) -> str:
        return self.name or self.factory

    @property
    def key(self) -> str:
        return f"{self.path}::{self.factory}"


@dataclass
class Discovery:
    targets: list[TargetSpec] = field(default_factory=list)
    tool_errors: list[ToolError] = field(default_factory=list)
    files_seen: int = 0
    files_without_targets: int = 0


def _is_target_decorator(node: ast.expr) -> bool:
    call = node.func if isinstance(node, ast.Call) else node
    if isinstance(call, ast.Attribute):
        return call.attr == "target" and isinstance(call.value, ast.Name) and call.value.id in (
            "etrace_lint", "etl")
    return isinstance(call, ast.Name) and call.id == "target"


def _decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        for kw in node.keywords:
            if kw.arg == "name" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                return kw.value.value
    return ""


def _imports_target_name(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "etrace_lint":
            if any(alias.name == "target" and alias.asname in (None, "target") for alias in node.names):
                return True
    return False


def targets_in_source(path: str, source: bytes) -> list[TargetSpec]:
    """Targets defined at the top level of one file's source. Raises SyntaxError."""
    tree = ast.parse(source, filename=path)
    bare_target_ok = _imports_target_name(tree)
    found = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        marked = [d for d in node.decorator_list if _is_target_decorator(d)
                  and (bare_target_ok or not isinstance(d if not isinstance(d, ast.Call) else d.func, ast.Name))]
        if marked:
            found.append(TargetSpec(path, node.name, node.lineno, _decorator_name(marked[0])))
        elif node.name.startswith(TARGET_PREFIX):
            found.append(TargetSpec(path, node.name, node.lineno))
    return found


def read_source(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


class IgnoreRules:
    """``.gitignore`` files, read with git's own rules (pathspec), plus exclude globs.

    Every ``.gitignore`` from the top of the git work tree (else the root)
    down to a file's folder applies, each relative to its own folder, the
    deeper one winning, as git reads them: negation, anchored patterns, ``**``
    and directory-only patterns included. A folder that is ignored is not
    entered, so nothing below it is linted (git cannot re-include such a
    file either); a folder named on the command line is linted even when it
    sits inside an ignored one.
    """

    def __init__(self, root: str, excludes: tuple[str, ...] = ()):
        self.root = os.path.abspath(root)
        self.real_root = os.path.realpath(root)
        self.top = _work_tree_top(self.root) or self.root
        self.excludes = tuple(DEFAULT_EXCLUDES) + tuple(excludes)
        self._gitignores: dict[str, pathspec.GitIgnoreSpec | None] = {}
        self._ignored_dirs: dict[str, bool] = {}

    def _spec(self, directory: str) -> "pathspec.GitIgnoreSpec | None":
        if directory not in self._gitignores:
            try:
                with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace") as handle:
                    self._gitignores[directory] = pathspec.GitIgnoreSpec.from_lines(handle.read().splitlines())
            except OSError:
                self._gitignores[directory] = None
        return self._gitignores[directory]

    def _chain(self, path: str) -> list[tuple[str, "pathspec.GitIgnoreSpec"]]:
        """The .gitignore files that apply to ``path``, the deepest first, each with its folder."""
        chain = []
        directory = os.path.dirname(path)
        while _inside(directory, self.top):
            spec = self._spec(directory)
            if spec is not None:
                chain.append((directory, spec))
            parent = os.path.dirname(directory)
            if parent == directory or directory == self.top:
                break
            directory = parent
        return chain

    @staticmethod
    def _relative(path: str, base: str, is_dir: bool) -> str:
        return os.path.relpath(path, base).replace(os.sep, "/") + ("/" if is_dir else "")

    def _gitignored(self, path: str, is_dir: bool) -> bool:
        """Whether git ignores ``path``: the deepest .gitignore with a pattern that decides wins."""
        for base, spec in self._chain(path):
            decided = spec.check_file(self._relative(path, base, is_dir)).include
            if decided is not None:
                return decided
        return False

    def _own_verdict(self, path: str, is_dir: bool) -> bool:
        """Inside an ignored folder the walk entered (one named on the command line): whether
        a pattern ignores ``path`` itself, not through that folder."""
        parent = os.path.dirname(path)
        for base, spec in self._chain(path):
            rel, parent_rel = self._relative(path, base, is_dir), self._relative(parent, base, True)
            for pattern in reversed(spec.patterns):
                if pattern.include is None or not pattern.match_file(rel) or pattern.match_file(parent_rel):
                    continue
                return pattern.include
        return False

    def _ignored_dir(self, directory: str) -> bool:
        if directory not in self._ignored_dirs:
            self._ignored_dirs[directory] = directory != self.top and _inside(directory, self.top) \
                and self._gitignored(directory, True)
        return self._ignored_dirs[directory]

    def excluded_by_config(self, path: str) -> bool:
        """Only the user's exclude globs, for files named on the command line."""
        rel = os.path.relpath(os.path.abspath(path), self.root).replace(os.sep, "/")
        name = os.path.basename(path)
        user_globs = self.excludes[len(DEFAULT_EXCLUDES):]
        return any(fnmatch.fnmatch(name, g) or fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(rel, g.rstrip("/") + "/*")
                   for g in user_globs)

    def excluded(self, path: str, is_dir: bool) -> bool:
        path = os.path.abspath(path)
        name = os.path.basename(path)
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        for glob in self.excludes:
            glob = glob.rstrip("/")
            if fnmatch.fnmatch(name, glob) or fnmatch.fnmatch(rel, glob) or fnmatch.fnmatch(rel, glob + "/*"):
                return True
        # a pattern that ignores a folder matches all below it: a path inside a folder the walk
        # entered anyway (one named on the command line) is judged on its own patterns
        if self._ignored_dir(os.path.dirname(path)):
            return self._own_verdict(path, is_dir)
        return self._gitignored(path, is_dir)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _work_tree_top(start: str) -> str | None:
    """The folder holding ``.git`` (a folder, or a worktree's file) at or above ``start``."""
    directory = start
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def iter_python_files(path: str, ignore: IgnoreRules, seen_dirs: set[str] | None = None) -> Iterator[str]:
    """Python files under ``path``, sorted, honouring ignores; symlink loops are cut."""
    seen_dirs = set() if seen_dirs is None else seen_dirs
    real = os.path.realpath(path)
    if real in seen_dirs:
        return
    seen_dirs.add(real)
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        full = os.path.join(path, entry.name)
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        if ignore.excluded(full, is_dir):
            continue
        if entry.is_symlink() and not _inside(os.path.realpath(full), ignore.real_root):
            continue  # a link out of the project would lint someone else's files
        if is_dir:
            yield from iter_python_files(full, ignore, seen_dirs)
        elif entry.name.endswith(".py") and entry.is_file():
            yield full


def discover(paths: list[str], root: str, excludes: tuple[str, ...] = ()) -> Discovery:
    """Resolve command-line paths (files, folders, ``file.py::factory``) to targets."""
    result = Discovery()
    ignore = IgnoreRules(root, excludes)
    seen: set[str] = set()
    for arg in paths:
        factory = None
        if "::" in arg:
            arg, factory = arg.split("::", 1)
        path = os.path.abspath(arg)
        if not os.path.exists(path):
            result.tool_errors.append(ToolError(
                arg if not factory else f"{arg}::{factory}",
                f"{arg}: no such file or directory", Location(path, 1), "missing-path"))
            continue
        if os.path.isdir(path):
            if factory:
                result.tool_errors.append(ToolError(f"{arg}::{factory}",
                                                    f"{arg} is a folder: `::{factory}` needs a file",
                                                    Location(path, 1), "usage"))
                continue
            files = list(iter_python_files(path, ignore))
        elif factory is None and ignore.excluded_by_config(path):
            continue  # pre-commit names files one by one: the configured excludes still hold
        else:
            files = [path]
        for file in files:
            if file in seen and not factory:
                continue
            seen.add(file)
            _add_file(result, file, factory, root)
    return result


def _display(path: str, root: str) -> str:
    """How messages name a file: relative to the root, never absolute when avoidable."""
    rel = os.path.relpath(path, root)
    return path if rel.startswith("..") else rel.replace(os.sep, "/")


def _add_file(result: Discovery, file: str, factory: str | None, root: str) -> None:
    result.files_seen += 1
    shown = _display(file, root)
    try:
        source = read_source(file)
        found = targets_in_source(file, source)
    except SyntaxError as exc:
        result.tool_errors.append(ToolError(
            os.path.basename(file), f"{shown}: cannot be parsed: {exc.msg} (line {exc.lineno})",
            Location(file, exc.lineno or 1, (exc.offset or 1)), "syntax-error"))
        return
    except (UnicodeDecodeError, ValueError) as exc:
        result.tool_errors.append(ToolError(
            os.path.basename(file), f"{shown}: cannot be decoded as Python source: {exc}",
            Location(file, 1), "decode-error"))
        return
    except OSError as exc:
        result.tool_errors.append(ToolError(os.path.basename(file), f"{shown}: cannot be read: {exc.strerror}",
                                            Location(file, 1), "read-error"))
        return
    if factory:
        chosen = [t for t in found if t.factory == factory]
        if not chosen:
            chosen = [TargetSpec(file, factory, _def_line(source, factory) or 1)]
        result.targets.extend(chosen)
        return
    if not found:
        result.files_without_targets += 1
    result.targets.extend(found)


def _def_line(source: bytes, name: str) -> int | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node.lineno
    return None
