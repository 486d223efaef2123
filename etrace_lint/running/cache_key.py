"""The key that signs cache entries, kept outside the cache folder.

A cache folder travels: CI restores it between jobs, and a pull request's
job can write it. An entry is therefore replayed only when its HMAC-SHA256
was made with this user's key, so an edited entry, or one copied in from
another machine or job, is a miss, never a result.

The key is ``ETRACE_LINT_CACHE_KEY`` when that is set (a CI secret shared by
the jobs that should share results), else 32 random bytes in
``cache-key`` under the user's state folder (``$XDG_STATE_HOME/etrace-lint``,
``~/.local/state/etrace-lint``; platformdirs decides elsewhere), created on
first use and readable by the user alone.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets

import platformdirs

ENV_KEY = "ETRACE_LINT_CACHE_KEY"


def key_file() -> str:
    return os.path.join(platformdirs.user_state_dir("etrace-lint", appauthor=False), "cache-key")


def load_key() -> bytes | None:
    """This user's key; None when there is none and none can be made (the cache is then not used)."""
    given = os.environ.get(ENV_KEY)
    if given:
        return given.encode("utf-8")
    path = key_file()
    try:
        with open(path, "rb") as handle:
            key = handle.read().strip()
        if len(key) >= 32:
            return key
    except OSError:
        pass
    key = secrets.token_hex(32).encode("ascii")
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another run made it meanwhile
        try:
            with open(path, "rb") as handle:
                key = handle.read().strip()
            return key if len(key) >= 32 else None
        except OSError:
            return None
    except OSError:
        return None
    with os.fdopen(fd, "wb") as handle:
        handle.write(key + b"\n")
    return key


def sign(key: bytes, body: bytes) -> str:
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def verify(key: bytes, signature: str, body: bytes) -> bool:
    return hmac.compare_digest(sign(key, body), signature)
