"""Every verdict about a real model's weights agrees with braintrace's own online gradient.

tests/real_models/ holds models re-written from braintrace's documentation and
examples, brainpy.state, brainstate's examples and published experiment code
(each file names its source). The referee (tests/online_referee.py, braintrace's
public API only) measures, per target and per weight, the online gradient of
the target's algorithm against exact BPTT. The linter is run as a user runs
it over the folder's files: with default options (``--show-info`` so that its notes
are printed), as a CI job runs it (also writing a SARIF log), and with
``--verify``; for each of the two runs:

- a weight it says learns (ETL001, or ETL003's same-step learning) has a
  finite, non-zero online gradient;
- a weight whose online gradient is zero while BPTT's is not gets a warning or
  an error naming it, and one whose online gradient is not zero gets no
  finding saying it gets none;
- a model whose learner cannot be built or whose online step raises gets an
  error (a finding or a tool error), and one braintrace.compile refuses gets
  a warning or an error;
- a weight ETL003 says learns exactly from same-step gradients has the online
  gradient BPTT has;
- no weight gets two verdicts ("learns online" and "learns from same-step
  gradients only"); "learns online" beside a finding that one of the
  weight's uses is left out is one verdict, "learns partly", and holds when
  the online gradient is not zero.

A disagreement that remains is marked ``xfail(strict=True)`` in
tests/real_models_check.py with its mechanism, so that fixing it turns the mark
into a failure to remove. The corpus is checked in five parts, one file each
(tests/test_real_models_a_b.py and the others): this file checks that the parts
hold the whole corpus, each file once.
"""
from __future__ import annotations

import glob
import os

import pytest
from helpers import REPO

pytest.importorskip("brainpy.state", reason="the corpus's spiking models are built from brainpy.state")

from real_models_check import PARTS, TARGETS, corpus_part  # noqa: E402


def test_the_corpus_is_large_enough():
    assert len(TARGETS) >= 30, [spec.name for spec in TARGETS]
    assert len({spec.name for spec in TARGETS}) == len(TARGETS)


def test_the_parts_hold_every_corpus_file_once_and_each_has_its_test_file():
    parts = [corpus_part(first, last) for first, last in PARTS]
    files = [file for part in parts for file in part]
    assert sorted(files) == sorted({spec.file for spec in TARGETS}), "a corpus file is in no part, or in two"
    assert all(parts), parts
    here = os.path.join(REPO, "tests")
    assert sorted(glob.glob(os.path.join(here, "test_real_models_*.py"))) == sorted(
        os.path.join(here, f"test_real_models_{first}_{last}.py") for first, last in PARTS)
