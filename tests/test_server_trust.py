"""The server runs no code of a workspace that has not opted in, and never a file outside its folders.

(A folder trusted by the editor's ``trusted`` option is linted in test_server.py.)"""

from __future__ import annotations

import os
import sys
import time

import pytest

pytest.importorskip("pygls")
from helpers import fixture  # noqa: E402
from lsprotocol import types  # noqa: E402

sys.path.insert(0, fixture("server"))
from lsp_session import LspSession, uri  # noqa: E402

# Importing this file leaves a marker beside it; its model has one weight through a plain `@`.
MARKER_MODEL = '''"""Leaves a marker when imported."""

import pathlib

import braintrace
import brainstate
import jax.numpy as jnp

pathlib.Path(__file__).with_name(pathlib.Path(__file__).stem + ".imported").write_text("imported")


class PlainInput(brainstate.nn.Module):
    def __init__(self, n_in=3, n=4):
        super().__init__()
        self.w_in = brainstate.ParamState(jnp.ones((n_in, n)) * 0.1)
        self.w_rec = brainstate.ParamState(jnp.eye(n) * 0.5)
        self.h = brainstate.HiddenState(jnp.zeros((n,)))

    def update(self, x):
        drive = x @ self.w_in.value
        self.h.value = jnp.tanh(drive + braintrace.matmul(self.h.value, self.w_rec.value))
        return self.h.value


def etrace_target_marker():
    return PlainInput(), (jnp.ones((3,)),)
'''
PLAIN_LINE = 20


def _project(root, table: bool):
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[project]\nname = "models"\nversion = "0"\n'
                                         + ("\n[tool.etrace-lint]\n" if table else ""))
    model = root / "model.py"
    model.write_text(MARKER_MODEL)
    return model


def _marker(model) -> bool:
    return model.with_name(model.stem + ".imported").exists()


def test_an_untrusted_workspace_runs_nothing_until_it_opts_in(tmp_path):
    model = _project(tmp_path / "untrusted", table=False)
    outside = _project(tmp_path / "elsewhere", table=True)
    session = LspSession(model.parent)
    try:
        session.open(model)
        session.save(model)
        [notice] = session.wait_for(lambda s: s.diagnostics.get(uri(model)), what="the trust notice")
        assert notice.severity == types.DiagnosticSeverity.Information and notice.source == "etrace-lint"
        assert "[tool.etrace-lint]" in notice.message and '"trusted": true' in notice.message
        time.sleep(2)  # a lint, had one started, would have imported the file by now
        assert not _marker(model)
        assert len(session.diagnostics[uri(model)]) == 1
        # the project opts in: saving pyproject.toml is enough
        pyproject = model.parent / "pyproject.toml"
        session.open(outside)  # a configured project, but not a folder of this workspace
        session.save(outside)
        session.open(pyproject)
        session.save(pyproject, pyproject.read_text() + "\n[tool.etrace-lint]\n")
        session.wait_for(lambda s: s.codes(model) == [(PLAIN_LINE, "ETL201")], what="the lint once trusted")
        assert _marker(model)
        assert not _marker(outside) and uri(outside) not in session.diagnostics
    finally:
        session.close()


def test_bad_initialization_options_are_reported_and_trust_nothing(tmp_path):
    model = _project(tmp_path / "project", table=False)
    session = LspSession(model.parent, init_options={"trusted": "yes", "selct": ["ETL2"]})
    try:
        session.open(model)
        session.wait_for(lambda s: s.diagnostics.get(uri(model)), what="the trust notice")
        assert any("initialization option" in m for m in session.messages)
        assert not _marker(model)
    finally:
        session.close()


def test_a_nested_project_is_trusted_only_by_its_own_opt_in(tmp_path):
    """The workspace opted in and the editor trusts it; a vendored project inside it, and a checkout
    with its own .git, are still not run until their own pyproject.toml has the table."""
    workspace = _project(tmp_path / "workspace", table=True)
    vendored = _project(tmp_path / "workspace" / "vendor" / "other", table=False)
    checkout = tmp_path / "workspace" / "deps" / "checkout"
    (checkout / ".git").mkdir(parents=True)
    in_checkout = checkout / "model.py"
    in_checkout.write_text(MARKER_MODEL)
    session = LspSession(workspace.parent, init_options={"trusted": True})
    try:
        for nested in (vendored, in_checkout):
            session.open(nested)
            [notice] = session.wait_for(lambda s: s.diagnostics.get(uri(nested)), what="the nested project's notice")
            assert notice.severity == types.DiagnosticSeverity.Information
            assert str(nested.parent / "pyproject.toml") in notice.message and "project of its own" in notice.message
        session.open(workspace)  # one lint at a time: once this one is done, any earlier one would be too
        session.wait_for(lambda s: s.codes(workspace) == [(PLAIN_LINE, "ETL201")], what="the workspace's lint")
        assert _marker(workspace) and not _marker(vendored) and not _marker(in_checkout)
        # the vendored project opts in itself
        pyproject = vendored.parent / "pyproject.toml"
        session.open(pyproject)
        session.save(pyproject, pyproject.read_text() + "\n[tool.etrace-lint]\n")
        session.wait_for(lambda s: s.codes(vendored) == [(PLAIN_LINE, "ETL201")], what="the opted-in nested lint")
        assert _marker(vendored) and not _marker(in_checkout)
        assert session.codes(in_checkout) == [(1, "etrace-lint")], "the checkout is still not trusted"
    finally:
        session.close()


def test_a_link_to_a_file_or_folder_outside_the_workspace_is_never_imported(tmp_path):
    workspace = _project(tmp_path / "workspace", table=True)
    outside_file = _project(tmp_path / "elsewhere", table=True)
    outside_folder = _project(tmp_path / "elsewhere_too", table=True).parent
    vendored = _project(tmp_path / "workspace" / "vendor" / "other", table=False)
    linked_file = workspace.parent / "linked.py"
    linked_file.symlink_to(outside_file)
    (workspace.parent / "linked_folder").symlink_to(outside_folder, target_is_directory=True)
    through_folder = workspace.parent / "linked_folder" / "model.py"
    into_nested = workspace.parent / "alias.py"
    into_nested.symlink_to(vendored)
    session = LspSession(workspace.parent, init_options={"trusted": True})
    try:
        for link in (linked_file, through_folder):
            session.open(link)
            [notice] = session.wait_for(lambda s: s.diagnostics.get(uri(link)), what="the link's notice")
            assert "outside the workspace folders" in notice.message and str(os.path.realpath(link)) in notice.message
        session.open(into_nested)  # a link into the nested project counts as that project's file
        [notice] = session.wait_for(lambda s: s.diagnostics.get(uri(into_nested)), what="the nested notice")
        assert "project of its own" in notice.message
        session.open(workspace)
        session.wait_for(lambda s: s.codes(workspace) == [(PLAIN_LINE, "ETL201")], what="the workspace's lint")
        assert _marker(workspace)
        assert not _marker(outside_file) and not (outside_folder / "model.imported").exists()
        assert not _marker(vendored)
    finally:
        session.close()
