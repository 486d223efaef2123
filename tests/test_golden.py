"""The bundled examples and the fixture corpus give byte for byte the JSON and SARIF recorded.

The snapshots live in ``tests/data/golden/braintrace-<version>/``, one folder per braintrace
line; a version without snapshots is skipped. They record behaviour, not the rules' texts (see
``tests/golden.py``). After a change that is meant to alter the output, regenerate both lines'
from the repository's root::

    python -m tests.golden --update --all-lines
"""

from __future__ import annotations

import difflib

import pytest
from golden import CORPORA, braintrace_version, produce, snapshot_folder, stored


@pytest.mark.parametrize("corpus", CORPORA, ids=[corpus.name for corpus in CORPORA])
def test_output_is_byte_identical_to_the_snapshot(corpus):
    version = braintrace_version()
    if stored(f"{corpus.name}.json") is None:
        pytest.skip(f"no snapshots for braintrace {version} in {snapshot_folder()}")
    for name, text in produce(corpus).items():
        expected = stored(name)
        assert expected is not None, f"{name} has no snapshot for braintrace {version}"
        if text != expected:
            diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                                f"snapshot/{name}", f"now/{name}", n=2))
            pytest.fail(f"{name} differs from its snapshot (braintrace {version}):\n{diff[:6000]}")
