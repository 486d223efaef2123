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

from .findings import Location, ToolError

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
    """``.gitignore`` files plus exclude globs, matched the way git does for the common cases."""

    def __init__(self, root: str, excludes: tuple[str, ...] = ()):
        self.root = os.path.abspath(root)
        self.real_root = os.path.realpath(root)
        self.excludes = tuple(DEFAULT_EXCLUDES) + tuple(excludes)
        self._gitignores: dict[str, list[tuple[str, bool, bool, bool]]] = {}

    def _patterns(self, directory: str) -> list[tuple[str, bool, bool, bool]]:
        if directory not in self._gitignores:
            patterns = []
            try:
                with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace") as fh:
                    for raw in fh:
                        line = raw.rstrip("\n").rstrip()
                        if not line or line.startswith("#"):
                            continue
                        negate = line.startswith("!")
                        line = line[1:] if negate else line
                        dir_only = line.endswith("/")
                        line = line.rstrip("/")
                        anchored = "/" in line
                        patterns.append((line.lstrip("/"), negate, dir_only, anchored))
            except OSError:
                pass
            self._gitignores[directory] = patterns
        return self._gitignores[directory]

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
        ignored = False
        directory = os.path.dirname(path)
        chain = []
        while True:
            chain.append(directory)
            if directory == self.root or os.path.dirname(directory) == directory or not directory.startswith(self.root):
                break
            directory = os.path.dirname(directory)
        for base in reversed(chain):
            sub = os.path.relpath(path, base).replace(os.sep, "/")
            for pattern, negate, dir_only, anchored in self._patterns(base):
                if dir_only and not is_dir:
                    continue
                target = sub if anchored else name
                if fnmatch.fnmatch(target, pattern):
                    ignored = not negate
        return ignored


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def iter_python_files(path: str, ignore: IgnoreRules, seen_dirs: set | None = None):
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
