"""Whether the server may run a workspace's code.

Linting a target imports its file and calls its factory; an editor opening a
file must not be enough for that. A workspace is trusted when its project
opted in (a ``[tool.etrace-lint]`` table in its pyproject.toml, found the way
the CLI finds it) or the editor says so (``trusted = true`` in the
initialization options). Until then the server runs nothing of it and says,
once per file that has targets, how to enable linting.
"""

from __future__ import annotations

import os


def is_trusted(config_file: str | None, trusted_by_editor: bool) -> bool:
    return trusted_by_editor or config_file is not None


def untrusted_message(folder: str) -> str:
    pyproject = os.path.join(folder, "pyproject.toml")
    return ("etrace-lint has not linted this file: linting imports it and calls its target factories, "
            "and this workspace has not opted in. To enable it, add a [tool.etrace-lint] table to "
            f"{pyproject}, or set \"trusted\": true in the server's initialization options.")


def outside_message() -> str:
    return "etrace-lint lints only files inside the workspace folders; this file is not imported."
