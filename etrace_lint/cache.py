"""Per-target results on disk, so an unchanged tree is linted without importing JAX.

A result is keyed by the target, the versions of etrace-lint, braintrace,
brainstate, jax, jaxlib, saiunit and Python, and the effective configuration;
it stays valid while every project file the target's import pulled in has the
same content. Entries are JSON (a cache file must not be able to run code),
written atomically, so two runs at once never read half a file.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import sys
import tempfile
from typing import Iterable

from .discover import TargetSpec
from .findings import TargetResult

FORMAT = 1
_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by etrace-lint.\n"
        "# For information about cache directory tags see https://bford.info/cachedir/\n")
_DISTRIBUTIONS = ("etrace-lint", "braintrace", "brainstate", "jax", "jaxlib", "saiunit")


def _versions() -> dict:
    found = {"python": sys.version.split()[0], "format": FORMAT}
    for dist in _DISTRIBUTIONS:
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            found[dist] = ""
    found["etrace-lint-source"] = _own_source_digest()
    return found


def _own_source_digest() -> str:
    """Rules and engine change between releases of a development install too."""
    here = os.path.dirname(os.path.abspath(__file__))
    from . import rules as rules_pkg

    digest = hashlib.sha256()
    for folder in (here, *rules_pkg.__path__):
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith((".py", ".md")):
                    path = os.path.join(dirpath, name)
                    stat = os.stat(path)
                    digest.update(f"{os.path.relpath(path, folder)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def file_digest(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


class Cache:
    def __init__(self, directory: str, root: str, configuration: dict):
        self.directory = directory
        self.root = root
        self._context = json.dumps({"versions": _versions(), "configuration": configuration}, sort_keys=True,
                                   default=repr)
        self._digests: dict[str, str | None] = {}

    def _digest(self, path: str) -> str | None:
        if path not in self._digests:
            self._digests[path] = file_digest(path)
        return self._digests[path]

    def _key(self, spec: TargetSpec) -> str:
        rel = os.path.relpath(spec.path, self.root)
        raw = f"{self._context}\0{rel}\0{spec.factory}"
        return hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()

    def _entry_path(self, key: str) -> str:
        return os.path.join(self.directory, "targets", key[:2], key + ".json")

    def get(self, spec: TargetSpec) -> TargetResult | None:
        try:
            with open(self._entry_path(self._key(spec)), encoding="utf-8") as handle:
                entry = json.load(handle)
            if entry.get("format") != FORMAT:
                return None
            for rel, digest in entry["dependencies"].items():
                if self._digest(os.path.join(self.root, rel)) != digest:
                    return None
            return TargetResult.from_json(entry["result"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # missing, truncated or corrupted: lint again

    def put(self, spec: TargetSpec, result: TargetResult) -> None:
        if result.tool_errors:
            return  # a timeout or a missing package may be gone next time
        dependencies = {}
        for path in sorted(set(result.dependencies) | {spec.path}):
            digest = self._digest(path)
            if digest is None:
                return
            dependencies[os.path.relpath(path, self.root)] = digest
        entry = {"format": FORMAT, "target": [os.path.relpath(spec.path, self.root), spec.factory, spec.line,
                                               spec.name],
                 "dependencies": dependencies, "result": result.to_json()}
        self._write(self._entry_path(self._key(spec)), json.dumps(entry, sort_keys=True))

    def dependents(self, changed: Iterable[str]) -> list[TargetSpec]:
        """Cached targets whose recorded dependencies include one of the ``changed`` files."""
        changed_rel = {os.path.relpath(os.path.abspath(p), self.root) for p in changed}
        found = []
        folder = os.path.join(self.directory, "targets")
        for dirpath, _, filenames in os.walk(folder):
            for name in sorted(filenames):
                try:
                    with open(os.path.join(dirpath, name), encoding="utf-8") as handle:
                        entry = json.load(handle)
                    if changed_rel.intersection(entry["dependencies"]):
                        rel, factory, line, target_name = entry["target"]
                        found.append(TargetSpec(os.path.join(self.root, rel), factory, line, target_name))
                except (OSError, ValueError, KeyError, TypeError):
                    continue
        return found

    def _ensure_directory(self) -> None:
        os.makedirs(self.directory, exist_ok=True)
        tag = os.path.join(self.directory, "CACHEDIR.TAG")
        if not os.path.exists(tag):
            self._write(tag, _TAG)
            self._write(os.path.join(self.directory, ".gitignore"), "*\n")

    def _write(self, path: str, text: str) -> None:
        try:
            if not path.endswith(("CACHEDIR.TAG", ".gitignore")):
                self._ensure_directory()
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temp, path)
        except OSError:
            pass  # a read-only tree still lints; it is only slower
