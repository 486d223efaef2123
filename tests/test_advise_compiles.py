"""The advisor's ``compiles`` column is ``braintrace.compile``'s verdict, algorithm by algorithm.

The reference is ``braintrace.compile(model, algorithm, x, batch_size=B, **options)`` on a fresh copy of the
model from its factory, with the target's example inputs at the batch the advisor measured at: what a user who
calls the documented entry point gets. It is compared with ``etrace-lint advise`` as a user runs it on a model
with no hidden state (which braintrace.compile refuses under every algorithm: nothing to train online), with
the advisor's rows on real models it refuses in different ways or accepts, and with the advisor's verdict on
every model of tests/real_models (that one in tests/test_advise_compiles_corpus.py).
"""
from __future__ import annotations

import json
import os

import pytest
from helpers import REPO
from in_process import run_cli

brainstate = pytest.importorskip("brainstate")
braintrace = pytest.importorskip("braintrace")
from advise_reference import (  # noqa: E402
    MEASURED,
    NO_HIDDEN_STATE,
    REAL,
    REFUSAL,
    braintrace_compiles,
    declared,
    factory_of,
)

from etrace_lint.verify.advise.algorithms import installed  # noqa: E402
from etrace_lint.verify.advise.run import AdviceSettings, advise_model  # noqa: E402


@pytest.mark.parametrize("file, name", MEASURED, ids=[name for _, name in MEASURED])
def test_the_compiles_column_is_what_braintrace_compile_answers_for_every_algorithm(file, name):
    factory = factory_of(os.path.join(REAL, file), name)
    options = declared(factory)
    with brainstate.environ.context(**options.get("environ", {})):
        model, inputs = factory()[:2]
        rows = advise_model(model, inputs, target=name, batch_size=options.get("batch_size"),
                            settings=AdviceSettings(steps=2))
    by_label = {row.label: row for row in rows}
    assert set(by_label) == {algorithm.label for algorithm in installed()}
    answers = {}
    for algorithm in installed():
        row = by_label[algorithm.label]
        compiles, error = braintrace_compiles(factory, algorithm, row.measured_batch)
        answers[algorithm.label] = compiles
        assert row.compiles == compiles, (algorithm.label, row.error, error)
        if not compiles:  # nothing measured, and braintrace's own words say why
            assert not row.runs and not row.recommended, algorithm.label
            assert row.error.startswith(f"braintrace.compile raised {error.split(':')[0]}:"), (row.error, error)
    assert all(answers.values()) if name == "two_layer_gru" else not any(answers.values())


def test_advise_says_what_braintrace_compile_says_of_a_model_without_hidden_state(tmp_path):
    """As a user runs it: every algorithm, the JSON rows and the text table (the command line in this
    process, tests/in_process.py: what the run reports is the question, not its workers)."""
    path, _, name = NO_HIDDEN_STATE.partition("::")
    factory = factory_of(os.path.join(REPO, path), name)
    cache = str(tmp_path / "cache")
    done = run_cli("advise", NO_HIDDEN_STATE, "--steps", "2", "--no-probe", "--cache-dir", cache,
                   "--output-format", "json")
    rows = {(row["algorithm"], row["options"].get("vjp_method")): row for row in json.loads(done.stdout)["advice"]}
    assert len(rows) == len(installed()), done.stdout
    for algorithm in installed():
        row = rows[(algorithm.name, algorithm.options.get("vjp_method"))]
        compiles, error = braintrace_compiles(factory, algorithm, row["measured_batch"])
        assert row["compiles"] == compiles, (algorithm.label, row["error"], error)
        assert not compiles and REFUSAL in error  # braintrace.compile's guardrail, on both braintrace lines
        assert not row["runs"] and REFUSAL in row["error"], row
    text = run_cli("advise", NO_HIDDEN_STATE, "--steps", "2", "--no-probe", "--cache-dir", cache).stdout
    table = {cells[0]: cells[1:3] for cells in map(str.split, text.splitlines())
             if cells and cells[0] in {algorithm.label for algorithm in installed()}}
    assert set(table) == {algorithm.label for algorithm in installed()}, text
    assert all(cells == ["no", "-"] for cells in table.values()), text
    assert f"d_rtrl: braintrace.compile raised CompilationError: {REFUSAL}" in text
    assert "no algorithm runs" in text
