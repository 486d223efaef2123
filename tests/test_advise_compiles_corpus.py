"""The advisor's ``compiles`` column on every model of tests/real_models is ``braintrace.compile``'s verdict,
algorithm by algorithm (the reference, and the advisor's other checks: tests/test_advise_compiles.py)."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("brainstate")
pytest.importorskip("braintrace")
from advise_reference import CORPUS, REAL, REFUSAL, advisor_verdicts, braintrace_compiles, factory_of  # noqa: E402

from etrace_lint.verify.advise.algorithms import installed  # noqa: E402


@pytest.mark.parametrize("spec", CORPUS, ids=[spec.name for spec in CORPUS])
def test_every_corpus_model_compiles_where_braintrace_compile_accepts_it(spec):
    factory = factory_of(os.path.join(REAL, spec.file), spec.factory)
    batch, verdicts = advisor_verdicts(factory)
    wrong = []
    for algorithm in installed():
        compiles, error = braintrace_compiles(factory, algorithm, batch)
        refusal = verdicts[algorithm.label]
        if (refusal is None) != compiles or (REFUSAL in error) != (REFUSAL in (refusal or "")):
            wrong.append(f"{algorithm.label}: advisor {refusal or 'compiles'}; braintrace.compile "
                         f"{error or 'compiles'}")
    assert not wrong, "\n".join(wrong)
