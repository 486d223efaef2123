"""The slice of the differential campaign against braintrace, its second half of tests/fixtures/fuzz/ (from
``fuzz_m``): as tests/test_fuzz_slice.py, in a file of its own so that neither runs long."""

from __future__ import annotations

import pytest
from fuzz_slice import assert_agrees, slice_cases, worker_pair

SECOND_HALF = ("fuzz_m", "")


@pytest.fixture(scope="module")
def workers():
    yield from worker_pair()


@pytest.mark.parametrize("fixture, spec", slice_cases(SECOND_HALF))
def test_the_lint_agrees_with_braintrace_on_every_weight(workers, tmp_path, fixture, spec):
    assert_agrees(workers, str(tmp_path), fixture, spec)
