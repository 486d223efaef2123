"""Per-target results on disk, so an unchanged tree is linted without importing JAX.

A result is keyed by the project root, the target, the versions of
etrace-lint, braintrace, brainstate, jax, jaxlib, saiunit and Python (read
from package metadata, never by importing them), and the configuration that
reaches the engine; it stays valid while everything the target read is
unchanged (:mod:`.reads`): every installed distribution whose modules were
imported keeps its version, and every other module and every file opened
while the target ran keeps its content. Entries are JSON (a cache file must
not be able to run code), written to a temporary file and renamed into
place, so two runs at once never read half a file. A truncated or corrupted
entry is a miss, and so is one not signed with this user's key
(:mod:`.cache_key`): an edited entry, or one copied in from elsewhere.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping

import etrace_lint

from .. import rules as rules_pkg
from ..core.findings import TargetResult
from ..core.json_types import JsonObject, json_object
from ..discovery.discover import TargetSpec
from .cache_key import load_key, sign, verify

# 3: installed distributions a target imported, by version; 4: signed; 5: counted_only; 6: findings' subjects;
# 7: every weight and hidden state a finding names, with their paths, in its subject
FORMAT = 7
_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by etrace-lint.\n"
        "# For information about cache directory tags see https://bford.info/cachedir/\n")
_DISTRIBUTIONS = ("etrace-lint", "braintrace", "brainstate", "jax", "jaxlib", "saiunit")
# Tool errors that the same files and versions reproduce; the others (a
# timeout, a crash, a package installed since) may be gone next time.
_REPRODUCIBLE = ("import-error", "no-factory", "factory-error", "bad-return")
_ENVIRONMENT_ERRORS = ("ModuleNotFoundError", "ImportError")


_pinned: dict[str, str] | None = None


def pin_versions() -> None:
    """From now on :func:`versions` answers what it read first: for a process whose workers run what was
    installed when it started (the daemon, which ends as soon as any of it changes; the language server,
    whose fork server imported those versions at its start and forks every worker from them)."""
    global _pinned
    _pinned = versions()


def versions() -> dict[str, str]:
    if _pinned is not None:
        return dict(_pinned)
    found = {"python": sys.version.split()[0], "cache-format": str(FORMAT)}
    for dist in _DISTRIBUTIONS:
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            found[dist] = ""
    found["etrace-lint-source"] = _own_source_digest()
    return found


def own_source_files() -> Iterator[tuple[str, str]]:
    """etrace-lint's own ``.py`` and ``.md`` files, the package's and the rules', in a stable order,
    as (path relative to its folder, path)."""
    here = os.path.dirname(os.path.abspath(etrace_lint.__file__))
    for folder in (here, *rules_pkg.__path__):
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith((".py", ".md")):
                    path = os.path.join(dirpath, name)
                    yield os.path.relpath(path, folder), path


def _own_source_digest() -> str:
    """Rules and engine change between releases of a development install too: sizes and times are
    enough for this machine's cache (a shard's record digests contents, see shards.py)."""
    digest = hashlib.sha256()
    for relative, path in own_source_files():
        stat = os.stat(path)
        digest.update(f"{relative}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def file_digest(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def cacheable(result: TargetResult) -> bool:
    return all(e.reason in _REPRODUCIBLE and not any(word in e.message for word in _ENVIRONMENT_ERRORS)
               for e in result.tool_errors)


class Cache:
    def __init__(self, directory: str, root: str, configuration: Mapping[str, object],
                 environment: dict[str, str] | None = None, count_only: frozenset[str] = frozenset()) -> None:
        """``count_only``: the rules whose findings this run only counts (``policy.engine_scope``);
        an entry that counted a rule this run shows is stale. It is not part of the key: one
        entry serves runs with and without ``--show-info`` once it holds every note."""
        self.directory = directory
        self.count_only = count_only
        self.root = os.path.abspath(root)
        self._context = json.dumps({"root": self.root, "versions": environment or versions(),
                                    "configuration": configuration}, sort_keys=True, default=repr)
        self._digests: dict[str, str | None] = {}
        self._versions: dict[str, str] = {}
        self._key_bytes: bytes | None = None  # read on first use: a run without a cache hit never needs it

    def _digest(self, path: str) -> str | None:
        if path not in self._digests:
            self._digests[path] = file_digest(path)
        return self._digests[path]

    def _version(self, name: str) -> str:
        if name not in self._versions:
            try:
                self._versions[name] = importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                self._versions[name] = ""
        return self._versions[name]

    def _key(self, spec: TargetSpec) -> str:
        raw = f"{self._context}\0{os.path.relpath(spec.path, self.root)}\0{spec.factory}"
        return hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()

    def _entry_path(self, key: str) -> str:
        return os.path.join(self.directory, "targets", key[:2], key + ".json")

    def signing_key(self) -> bytes | None:
        if self._key_bytes is None:
            self._key_bytes = load_key() or b""
        return self._key_bytes or None

    def _read_entry(self, path: str, authenticated: bool = True) -> JsonObject:
        """An entry's JSON; with ``authenticated``, only when its signature is this user's (else ValueError)."""
        with open(path, encoding="utf-8") as handle:
            signed = json.load(handle)
        body = signed["entry"]
        if authenticated:
            key = self.signing_key()
            if key is None or not verify(key, str(signed["hmac"]), body.encode("utf-8")):
                raise ValueError("not signed with this user's key")
        entry = json.loads(body)  # checked field by field by the callers
        if not isinstance(entry, dict):
            raise ValueError("not a cache entry")
        return entry

    def get(self, spec: TargetSpec) -> TargetResult | None:
        self._digest(spec.path)  # the text before the lint, hit or miss: put keeps no result of another text
        try:
            entry = self._read_entry(self._entry_path(self._key(spec)))
            if entry.get("format") != FORMAT:
                return None
            for rel, digest in json_object(entry["dependencies"]).items():
                if self._digest(os.path.join(self.root, rel)) != digest:
                    return None
            for name, version in json_object(entry["distributions"]).items():
                if self._version(name) != version:
                    return None
            result = TargetResult.from_json(json_object(entry["result"]))
            return result if result.serves(self.count_only) else None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # missing, truncated or corrupted: lint again

    def recorded_seconds(self, specs: Iterable[TargetSpec]) -> dict[str, float]:
        """How long each target took when it was last linted with this configuration, stale or not:
        the scheduler starts slow files first."""
        found = {}
        for spec in specs:
            try:
                # unauthenticated: a time only orders the work, and every shard must read the same times
                entry = self._read_entry(self._entry_path(self._key(spec)), authenticated=False)
                seconds = json_object(entry["result"]).get("seconds")
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                continue
            if isinstance(seconds, (int, float)) and seconds > 0:
                found[spec.key] = float(seconds)
        return found

    def put(self, spec: TargetSpec, result: TargetResult) -> None:
        if not cacheable(result):
            return
        dependencies = {}
        for path in sorted(set(result.dependencies) | {spec.path}):
            # read now, after the lint: a file the lookup before it read with other bytes was saved while the
            # worker ran, which may have imported either text, so the result is kept under neither
            digest = file_digest(path)
            if digest is None or self._digests.get(path, digest) != digest:
                return
            self._digests[path] = digest
            dependencies[os.path.relpath(path, self.root)] = digest
        entry = {"format": FORMAT, "target": [os.path.relpath(spec.path, self.root), spec.factory, spec.line,
                                               spec.name],
                 "dependencies": dependencies, "distributions": dict(result.distributions),
                 "result": result.to_json()}
        key = self.signing_key()
        if key is None:
            return

        body = json.dumps(entry)
        signed = {"hmac": sign(key, body.encode("utf-8")), "entry": body}
        self._write(self._entry_path(self._key(spec)), json.dumps(signed))

    def dependents(self, changed: Iterable[str]) -> list[TargetSpec]:
        """Cached targets whose recorded dependencies include one of the ``changed`` files."""
        changed_rel = {os.path.relpath(os.path.abspath(p), self.root) for p in changed}
        found = []
        folder = os.path.join(self.directory, "targets")
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(".json") or name.startswith(".tmp-"):
                    continue
                try:
                    entry = self._read_entry(os.path.join(dirpath, name))
                    if changed_rel.intersection(json_object(entry["dependencies"])):
                        target = entry["target"]
                        if not isinstance(target, list):
                            raise ValueError("not a target")
                        rel, factory, line, target_name = target
                        if not (isinstance(rel, str) and isinstance(factory, str) and isinstance(line, int)
                                and isinstance(target_name, str)):
                            raise ValueError("not a target")
                        found.append(TargetSpec(os.path.join(self.root, rel), factory, line, target_name))
                except (OSError, ValueError, KeyError, TypeError, AttributeError):
                    continue
        return found

    def prepare(self) -> None:
        """Create the cache folder with its tag, so that what is written inside is known as a cache."""
        tag = os.path.join(self.directory, "CACHEDIR.TAG")
        if not os.path.exists(tag):
            os.makedirs(self.directory, exist_ok=True)
            self._atomic_write(tag, _TAG)
            self._atomic_write(os.path.join(self.directory, ".gitignore"), "*\n")

    def _write(self, path: str, text: str) -> None:
        try:
            self.prepare()
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self._atomic_write(path, text)
        except OSError:
            pass  # a read-only tree still lints; it is only slower

    @staticmethod
    def _atomic_write(path: str, text: str) -> None:
        fd, temp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.chmod(temp, 0o644)  # mkstemp's 0600 would lock others out of a shared cache
            os.replace(temp, path)
        except BaseException:
            try:
                os.unlink(temp)
            except OSError:
                pass
            raise
