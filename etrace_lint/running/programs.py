"""JAX's compiled programs kept in the cache folder (``xla/``), signed like the results.

The workers hand the folder to JAX's persistent compilation cache, so that a
later run loads the small programs every model needs instead of compiling
them again. XLA runs a program it finds there as it is: one edited in, or
copied into a cache folder that CI restored, would run in place of what the
model compiles to. So after each run the programs its workers wrote are
signed (HMAC-SHA256 of the file's name and bytes, under the user's cache key,
:mod:`.cache_key`) in a file beside each, and before workers start, every
program without this user's signature is removed: it is compiled again when
a model needs it, never loaded. The folder is kept under a size bound,
oldest programs first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .cache_key import sign, verify

SIGNATURE = ".hmac"  # beside each program: its signature
PROGRAMS_BYTES = 512 * 1024 * 1024
_NOT_PROGRAMS = (SIGNATURE, "-atime")  # JAX's access times, when a user bounds its cache


def _programs(path: str) -> list[os.DirEntry[str]]:
    try:
        return [entry for entry in os.scandir(path) if entry.is_file() and not entry.name.endswith(_NOT_PROGRAMS)]
    except OSError:
        return []


def _remove(path: str) -> None:
    for name in (path, path + SIGNATURE):
        try:
            os.unlink(name)
        except OSError:
            pass


@dataclass(frozen=True)
class ProgramFolder:
    """A folder of compiled programs; ``key`` signs them (None: a run's own temporary folder, which
    nobody else writes and which goes with the pool)."""

    path: str
    key: bytes | None = None

    def _signed_content(self, entry: os.DirEntry[str]) -> bytes:
        with open(entry.path, "rb") as handle:
            return entry.name.encode("utf-8", "surrogateescape") + b"\0" + handle.read()

    def _signed(self, entry: os.DirEntry[str]) -> bool:
        assert self.key is not None
        try:
            with open(entry.path + SIGNATURE, encoding="ascii") as handle:
                return verify(self.key, handle.read().strip(), self._signed_content(entry))
        except (OSError, UnicodeDecodeError):
            return False

    def admit(self) -> int:
        """Before workers start: remove every program not signed with the key; how many went."""
        if self.key is None:
            return 0
        removed = 0
        for entry in _programs(self.path):
            if not self._signed(entry):
                _remove(entry.path)
                removed += 1
        return removed

    def keep(self, since_ns: int, max_bytes: int = PROGRAMS_BYTES) -> None:
        """After a run: sign the programs written since ``since_ns`` (this run's workers wrote them),
        then trim the folder."""
        if self.key is not None:
            for entry in _programs(self.path):
                try:
                    if entry.stat().st_mtime_ns < since_ns or self._signed(entry):
                        continue
                    signature = sign(self.key, self._signed_content(entry))
                    with open(entry.path + SIGNATURE, "w", encoding="ascii") as handle:
                        handle.write(signature + "\n")
                except OSError:
                    continue  # an unsigned program is removed at the next start, nothing worse
        trim(self.path, max_bytes)


def trim(path: str, max_bytes: int = PROGRAMS_BYTES) -> None:
    """Keep the folder under ``max_bytes``: the oldest programs written go first, down to three
    quarters of it, so that trimming is rare. A program removed is compiled again when a model
    needs it."""
    try:
        entries = [(stat.st_mtime_ns, stat.st_size, entry.path)
                   for entry in _programs(path) for stat in (entry.stat(),)]
    except OSError:
        return
    total = sum(size for _, size, _ in entries)
    if total <= max_bytes:
        return
    for _, size, program in sorted(entries):
        if total <= max_bytes * 3 // 4:
            break
        _remove(program)
        total -= size
