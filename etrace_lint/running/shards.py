"""``--shard K/N``: split one run's targets across N machines, each file in exactly one shard.

The split depends only on the targets' root-relative paths and, when a cache
is present, on the time each target took when it was last linted, so every
runner that sees the same tree (and restores the same cache) computes the
same split. The files, in the order the tree is walked, are cut into N
consecutive stretches whose largest work is as small as it can be: a shard
lints neighbouring files, which build alike models and so share most of the
small programs XLA compiles for them. A file's work is the time its targets
took, or without recorded times its number of targets.

Each shard's log records what ``etrace-lint merge`` needs to tell that the
shards belong to one run (:func:`shard_record`): the etrace-lint release and
a digest of its source, the libraries' versions, the effective configuration
(every option that changes what is reported), the number of shards, a
digest of all the targets discovered and the SHA-256 of each file that holds
them: runners on different commits can discover the same targets in files
that differ.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from .. import __version__
from ..core.json_types import JsonObject, JsonValue
from ..discovery.discover import TargetSpec
from .cache import own_source_files
from .schedule import contiguous_cuts


class ShardError(ValueError):
    """A ``--shard`` value that is not ``K/N`` with 1 <= K <= N."""


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based, as written on the command line
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not match:
        raise ShardError(f"--shard takes K/N, such as 1/3; got {text!r}")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise ShardError(f"--shard {text}: K must be between 1 and N (N >= 1)")
    return Shard(index, count)


def split(specs: list[TargetSpec], root: str, count: int,
          seconds: dict[str, float] | None = None) -> list[list[TargetSpec]]:
    """The targets of each of ``count`` shards, each in the order of ``specs``."""
    files: dict[str, list[TargetSpec]] = {}
    for spec in specs:
        files.setdefault(os.path.relpath(spec.path, root).replace(os.sep, "/"), []).append(spec)
    seconds = seconds or {}
    known = [s for s in seconds.values() if s > 0]
    typical = sum(known) / len(known) if known else 1.0

    def work(group: list[TargetSpec]) -> float:
        if not seconds:
            return float(len(group))
        # rounded: a hundredth of a second of noise must not move a file to another shard
        return round(sum(seconds.get(spec.key, typical) for spec in group), 1)

    order = sorted(files, key=lambda rel: rel.split("/"))  # folder by folder, as the tree is walked
    cuts = contiguous_cuts([work(files[rel]) for rel in order], count)
    chosen = {rel: shard for shard, (start, end) in enumerate(cuts) for rel in order[start:end]}
    shards: list[list[TargetSpec]] = [[] for _ in range(count)]
    for spec in specs:
        shards[chosen[os.path.relpath(spec.path, root).replace(os.sep, "/")]].append(spec)
    return shards


def select(specs: list[TargetSpec], root: str, shard: Shard,
           seconds: dict[str, float] | None = None) -> list[TargetSpec]:
    return split(specs, root, shard.count, seconds)[shard.index - 1]


# Options that differ from runner to runner without changing what the run reports.
RUN_LOCAL = frozenset({"paths", "output_format", "sarif", "output_file", "quiet", "statistics", "color", "root",
                       "jobs", "timeout", "use_cache", "cache_dir", "shard", "list_targets", "debug", "config",
                       "isolated", "device", "preload"})
_LIBRARIES = ("braintrace", "brainstate", "jax", "jaxlib", "saiunit")


def _own_source() -> str:
    """A digest of etrace-lint's files by content (two installs of one commit agree; their times do not)."""
    digest = hashlib.sha256()
    for relative, path in own_source_files():
        with open(path, "rb") as handle:
            digest.update(relative.encode() + b"\0" + handle.read() + b"\0")
    return digest.hexdigest()[:16]


def _plain(value: object) -> JsonValue:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda item: str(item[0]))}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_plain(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def shard_record(specs: list[TargetSpec], mine: list[TargetSpec], root: str, shard: Shard,
                 configuration: Mapping[str, object]) -> JsonObject:
    """What this shard's log says about itself; :mod:`.merge` refuses shards whose records disagree."""

    def version(name: str) -> str:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return ""

    def rel(spec: TargetSpec) -> str:
        return f"{os.path.relpath(spec.path, root).replace(os.sep, '/')}::{spec.factory}"

    discovered = hashlib.sha256("\n".join(sorted(rel(spec) for spec in specs)).encode("utf-8")).hexdigest()[:16]
    files: JsonObject = {os.path.relpath(path, root).replace(os.sep, "/"): _file_digest(path)
             for path in sorted({spec.path for spec in specs})}
    shared = {name: _plain(value) for name, value in configuration.items() if name not in RUN_LOCAL}
    return {"index": shard.index, "count": shard.count, "total": len(specs),
            "etraceLint": f"{__version__} ({_own_source()})",
            "libraries": {"python": sys.version.split()[0], **{name: version(name) for name in _LIBRARIES}},
            "configuration": shared, "discovered": discovered, "files": files,
            "targets": [rel(spec) for spec in mine]}


def _file_digest(path: str) -> str:
    """The SHA-256 of the file's bytes; "" when it cannot be read (its targets are then tool errors)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return ""
    return digest.hexdigest()
