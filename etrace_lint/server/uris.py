"""file:// URIs <-> absolute paths (only local files are linted)."""

from __future__ import annotations

import os

from pygls import uris


def uri_to_path(uri: str) -> str | None:
    path = uris.to_fs_path(uri) if uri.startswith("file:") else None
    return os.path.abspath(path) if path else None


def path_to_uri(path: str) -> str:
    return uris.from_fs_path(os.path.abspath(path)) or ""
