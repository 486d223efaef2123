"""What the advisor shows that the big-O does not, each checked against braintrace itself on a small model:
an algorithm that compiles and raises on its first step, hidden groups that depend on the algorithm, a weight
with an exactly zero online gradient under one algorithm and not another; and the findings about the
configured algorithm that follow from them."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from helpers import fixture, lint_file

brainstate = pytest.importorskip("brainstate")
braintrace = pytest.importorskip("braintrace")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from etrace_lint.verify.advise.run import AdviceSettings, advise_model  # noqa: E402

SURPRISES = fixture("advise", "surprises.py")


def _module():
    spec = importlib.util.spec_from_file_location("advise_surprises", SURPRISES)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _advise(factory: str, algorithms: str, steps: int = 2):
    model, inputs = getattr(_module(), factory)()
    rows = advise_model(model, inputs, target=factory, batch_size=2,
                        settings=AdviceSettings(algorithms=algorithms, steps=steps))
    return {row.label: row for row in rows}


def _built(factory: str, cls, **options):
    model, inputs = getattr(_module(), factory)()
    learner = cls(model, **options)
    learner.compile_graph(*inputs)
    return learner, inputs


def test_hidden_groups_and_trace_depend_on_the_algorithm():
    from etrace_lint.verify.advise.algorithms import select
    from etrace_lint.verify.advise.memory import trace_memory
    from etrace_lint.verify.advise.run import inputs_at_batch

    model, inputs = _module().etrace_target_two_layers()
    memory = {algorithm.label: trace_memory(algorithm, model, inputs_at_batch(inputs, 2), batched=True,
                                            unbatched=False)
              for algorithm in select("d_rtrl,ostl_recurrent")}
    for label, cls in (("d_rtrl", braintrace.D_RTRL), ("ostl_recurrent", braintrace.OSTLRecurrent)):
        learner, _ = _built("etrace_target_two_layers", cls)
        assert memory[label].hidden_groups == len(learner.graph.hidden_groups)
    assert memory["d_rtrl"].hidden_groups == 2 and memory["ostl_recurrent"].hidden_groups == 1
    assert memory["ostl_recurrent"].law.c1 > memory["d_rtrl"].law.c1


def test_dni_compiles_and_raises_on_its_first_online_step_and_uoro_needs_ten_times_its_trace_in_xla():
    rows = _advise("etrace_target_diagonal", "dni,uoro")
    learner, inputs = _built("etrace_target_diagonal", braintrace.DNI)  # compiles
    with pytest.raises(Exception) as raised:
        learner.etrace_grad(inputs[0][None], step_fn=lambda x: jnp.mean(learner(x) ** 2), reduction="sum",
                            loss_output="scalar")
    row = rows["dni"]
    assert row.compiles and not row.runs
    assert type(raised.value).__name__ in row.error and "synthesizer" in row.error
    assert row.weights == () and row.flops_ratio is None and row.xla_temp_bytes is None
    # UORO's state is sized for real (its init reads a norm with float()): its bytes are those it allocates
    model, inputs = _module().etrace_target_diagonal()
    uoro = braintrace.UORO(model)
    uoro.compile_graph(*inputs)
    own = {id(st) for st in brainstate.graph.states(model).values()}
    allocated = sum(jnp.asarray(leaf).nbytes for st in brainstate.graph.states(uoro).values() if id(st) not in own
                    for leaf in jax.tree.leaves(st.value))
    assert rows["uoro"].trace_bytes == allocated
    assert rows["uoro"].xla_temp_bytes >= 10 * rows["uoro"].trace_bytes


def test_mean_subtraction_zeroes_single_step_gradients_but_not_multi_step_ones():
    rows = _advise("etrace_target_mean_subtracted", "d_rtrl,d_rtrl:multi-step")
    for label, options in (("d_rtrl", {}), ("d_rtrl:multi-step", {"vjp_method": "multi-step"})):
        learner, inputs = _built("etrace_target_mean_subtracted", braintrace.D_RTRL, **options)
        grads = learner.etrace_grad(jnp.stack([inputs[0]] * 2), step_fn=lambda x: jnp.mean(learner(x) ** 2),
                                    reduction="sum", loss_output="scalar")
        exactly_zero = not any(np.any(np.asarray(leaf)) for leaf in jax.tree.leaves(grads))
        assert exactly_zero == bool(rows[label].zero_gradient_weights), label
    assert set(rows["d_rtrl"].zero_gradient_weights) == {"fc.weight['bias']", "fc.weight['weight']"}
    assert rows["d_rtrl:multi-step"].zero_gradient_weights == ()
    assert rows["d_rtrl:multi-step"].recommended


def test_the_configured_algorithm_over_budget_and_leaving_weights_without_gradient():
    # d_rtrl's trace at batch 2 is 4 + 64 x 2 = 132 bytes; pp_prop's, 4 + 28 x 2 = 60
    findings, errors = lint_file(f"{SURPRISES}::etrace_target_mean_subtracted", advise=True,
                                 advise_algorithms=["d_rtrl", "pp_prop:multi-step"], advise_steps=2,
                                 memory_budget=100)
    assert not errors
    zero = sorted(f.properties["weight"] for f in findings if f.rule_id == "ETL304")
    assert zero == ["fc.weight['bias']", "fc.weight['weight']"]
    message = next(f.message for f in findings if f.rule_id == "ETL304")
    assert "under d_rtrl, the algorithm configured" in message and "pp_prop:multi-step (" in message
    over = [f for f in findings if f.rule_id == "ETL303"]
    assert len(over) == 1 and "needs 132 B of trace state at batch 2, over the memory budget of 100 B" in \
        over[0].message
    assert over[0].properties["advice"]["alternative"]["algorithm"] == "pp_prop"


def test_a_configured_algorithm_that_does_not_run():
    findings, errors = lint_file(f"{fixture('advise', 'models.py')}::etrace_target_configured_dni", advise=True,
                                 advise_algorithms=["dni", "d_rtrl"], advise_steps=2)
    assert not errors
    failed = [f for f in findings if f.rule_id == "ETL302"]
    assert len(failed) == 1 and "compiles, but its first online step raises" in failed[0].message
    assert failed[0].properties["advice"]["alternative"]["algorithm"] == "d_rtrl"

