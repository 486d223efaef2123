"""The real-model corpus's files from m to r: each verdict agrees with braintrace's own online gradient
(what is checked and why: tests/test_real_models.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("brainpy.state", reason="the corpus's spiking models are built from brainpy.state")

from real_models_check import part_tests  # noqa: E402

verdicts, test_verdicts_agree_with_the_online_gradient = part_tests("m", "r")
