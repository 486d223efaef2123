"""The real-model corpus's files from a to b: each verdict agrees with braintrace's own online gradient
(what is checked and why: tests/test_real_models.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("brainpy.state", reason="the corpus's spiking models are built from brainpy.state")

from real_models_check import cases, check_verdicts, corpus_part, lint_and_judge  # noqa: E402

FILES = corpus_part("a", "b")


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    return lint_and_judge(FILES, tmp_path_factory)


@pytest.mark.parametrize("target, run", cases(FILES))
def test_verdicts_agree_with_the_online_gradient(verdicts, target, run):
    check_verdicts(verdicts, target, run)
