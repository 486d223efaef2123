"""Whether the server may run a workspace's code.

Linting a target imports its file and calls its factory; an editor opening a
file must not be enough for that. A workspace is trusted when its project
opted in (a ``[tool.etrace-lint]`` table in its pyproject.toml, found the way
the CLI finds it) or the editor says so (``trusted = true`` in the
initialization options). Until then the server runs nothing of it and says,
once per file that has targets, how to enable linting.

Trust covers one project. A folder inside a workspace folder that is a
project of its own (it holds a pyproject.toml or a .git: a vendored package,
a checkout of someone else's code) is trusted only when its own
pyproject.toml has the table; neither the workspace's table nor the editor's
option reaches it. A file is placed by its real path: a link inside the
workspace to a file or folder outside every workspace folder is never
imported, and a link into a nested project counts as that project's file.
"""

from __future__ import annotations

import os

PROJECT_MARKERS = ("pyproject.toml", ".git")


def is_trusted(config_file: str | None, trusted_by_editor: bool) -> bool:
    return trusted_by_editor or config_file is not None


def inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def project_root(real_path: str, real_workspace: str) -> str:
    """The innermost project holding ``real_path`` (a real path inside ``real_workspace``): the
    nearest folder below the workspace folder with a pyproject.toml or a .git, else the workspace."""
    directory = os.path.dirname(real_path)
    while inside(directory, real_workspace) and directory != real_workspace:
        if any(os.path.lexists(os.path.join(directory, marker)) for marker in PROJECT_MARKERS):
            return directory
        directory = os.path.dirname(directory)
    return real_workspace


def untrusted_message(folder: str, nested: bool = False) -> str:
    pyproject = os.path.join(folder, "pyproject.toml")
    if nested:
        return ("etrace-lint has not linted this file: linting imports it and calls its target factories, and "
                f"{folder} is a project of its own inside the workspace, which has not opted in (the "
                "workspace's trust does not reach it). To enable it, add a [tool.etrace-lint] table to "
                f"{pyproject}.")
    return ("etrace-lint has not linted this file: linting imports it and calls its target factories, "
            "and this workspace has not opted in. To enable it, add a [tool.etrace-lint] table to "
            f"{pyproject}, or set \"trusted\": true in the server's initialization options.")


def outside_message(real_path: str) -> str:
    return (f"etrace-lint has not linted this file: it is a link to {real_path}, outside the workspace folders, "
            "and the server imports only files that lie inside them.")
