"""Messages read like advice to a modeller: the user's names, no braintrace jargon, what to do.

braintrace's own text stays in ``properties.braintraceMessage``; full state paths
stay in the properties too.
"""

from __future__ import annotations

import importlib.util
import re

import pytest
from helpers import fixture, lint_file, lint_shared
from test_compiler_rules import _Locator as _StubLocator
from test_compiler_rules import _record, finding_of
from test_levels import corpus_findings

from etrace_lint.analysis import braintrace_adapter as bt
from etrace_lint.core.findings import Level
from etrace_lint.core.naming import display_name
from etrace_lint.core.wording import plain_text
from etrace_lint.engine.rules_compiler import findings_from_error
from etrace_lint.writers.properties import finding_properties

TUPLE_PATH = re.compile(r"\(\s*'[^']*'\s*,")  # ('w',) or ('cell', 'h')
JARGON = ("ETP primitive", "non-parametric-tail", "<class ", "invar", "outvar", "Var(id=")

class _Locator(_StubLocator):
    states: dict = {}  # the model's states, by path: none here


EXPANDED_KEY = ("neu", "_before_updates",
                "(<class 'brainpy.state.Expon'>, (20,), {'tau': '10. ms'}) // "
                "(<class 'brainpy.state.CUBA'>, (), {'scale': Unit(\"V\")})", "syn", "g")


def _clean(message: str) -> list[str]:
    problems = [word for word in JARGON if word in message]
    if TUPLE_PATH.search(message):
        problems.append("a tuple path")
    return problems


def test_no_message_of_any_rule_shows_a_tuple_a_repr_or_jargon():
    dirty = [(f.rule_id, f.target, f.message, _clean(f.message)) for f in corpus_findings() if _clean(f.message)]
    assert not dirty, dirty
    # and every rule the corpus reaches keeps braintrace's own words beside its own
    for finding in corpus_findings():
        if "braintraceKind" in finding_properties(finding):
            assert finding_properties(finding)["braintraceMessage"], finding


@pytest.mark.parametrize("kind", ["primitive_inside_nested_jit", "pytree_weight_leaf_ambiguous",
                                  "transition_tail_bounded", "a_kind_from_the_future"])
def test_records_no_fixture_reaches_read_cleanly_too(kind):
    record = _record(kind, message="ETP primitive etp_mv (weight=('layer', 'w')) did something to ('layer', 'h')",
                     weight_path=("layer", "w"))
    finding = finding_of(record, _Locator())
    assert not _clean(finding.message), finding.message
    assert "etp_mv" in finding_properties(finding)["braintraceMessage"]


def test_paths_read_as_the_code_reaches_them():
    assert display_name(("layers", 1, "h")) == "layers[1].h"
    assert display_name(("cell", "Wr", "weight")) == "cell.Wr.weight"
    assert display_name(EXPANDED_KEY) == "neu.<Expon tau=10. ms>.syn.g"


def test_compiler_text_shows_paths_by_name_and_keeps_shapes():
    text = "Hidden states [('cell', 'h'), ('cell', 'c')] reach ('w',) with y shape=(8,) against (4, 4)"
    assert plain_text(text) == "Hidden states cell.h, cell.c reach w with y shape=(8,) against (4, 4)"
    assert plain_text("ETP primitive etp_mv found") == "ETP op `etp_mv` found"


def test_a_merged_group_names_its_states_and_keeps_the_full_keys():
    record = _record("hidden_group_merged", "info", message=f"Hidden states [{EXPANDED_KEY!r}, ('neu', 'V')] merged",
                     hidden_paths=(EXPANDED_KEY, ("neu", "V")))
    finding = finding_of(record, _Locator())
    assert finding.message.startswith("neu.<Expon tau=10. ms>.syn.g, neu.V feed each other")
    assert finding_properties(finding)["hiddenStatePaths"][0] == list(EXPANDED_KEY)
    assert not _clean(finding.message)


def test_a_plain_matmul_on_a_brainstate_linear_says_which_layer_to_use_and_where_it_is_made(tmp_path):
    path = tmp_path / "plain_linear.py"
    path.write_text(
        "import brainstate\nimport braintrace\nimport jax.numpy as jnp\n\n\n"
        "class RNN(brainstate.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.w_in = braintrace.nn.Linear(4, 8)\n"
        "        self.w_rec = brainstate.nn.Linear(8, 8)\n"
        "        self.h = brainstate.HiddenState(jnp.zeros((8,)))\n\n"
        "    def update(self, x):\n"
        "        self.h.value = jnp.tanh(self.w_in(x) + self.w_rec(self.h.value))\n"
        "        return self.h.value\n\n\n"
        "def etrace_target_rnn():\n"
        "    return RNN(), (jnp.ones((4,)),)\n", encoding="utf-8")
    findings, errors = lint_file(str(path))
    assert not errors
    (finding,) = [f for f in findings if f.rule_id == "ETL201"]
    assert finding.line == 14
    assert "make w_rec.weight's layer a braintrace.nn.Linear instead of a brainstate.nn.Linear" in finding.message
    assert "(created on line 10)" in finding.message


def test_a_plain_matmul_says_to_use_braintrace_matmul():
    findings, _ = lint_shared(fixture("own", "plain_op.py") + "::etrace_target_plain_input")
    (finding,) = [f for f in findings if f.rule_id == "ETL201"]
    assert "use braintrace.matmul instead of `@` / jnp.dot" in finding.message


WRONG_INPUT = '''
import braintrace
import jax.numpy as jnp


def etrace_target_stock_cell():
    return braintrace.nn.GRUCell(4, 8), (jnp.ones((5,)),)
'''


def test_a_stock_layer_traced_with_the_wrong_inputs_is_a_trace_error_that_shows_them(tmp_path):
    # the error is raised in library code only: still the model's, not an unknown compiler error
    path = tmp_path / "stock.py"
    path.write_text(WRONG_INPUT, encoding="utf-8")
    findings, errors = lint_file(str(path))
    assert not errors
    (finding,) = [f for f in findings if f.level is Level.ERROR]
    assert finding.rule_id == "ETL100"
    assert finding.message.startswith("the step does not trace with the example inputs (5,) float32: TypeError:")


CRASH = '''
import brainstate
import braintrace
import jax.numpy as jnp


class Cell(brainstate.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = brainstate.ParamState(jnp.ones((4, 4)) * 0.1)
        self.h = brainstate.HiddenState(jnp.zeros((4,)))

    def update(self, x):
        y = braintrace.matmul(x, self.w.value)
        self.h.value = jnp.tanh(0.9 * self.h.value + y)
        return self.h.value


def etrace_target_cell():
    return Cell(), (jnp.ones((4,)),)
'''


def test_an_internal_compiler_crash_is_placed_on_the_line_being_handled(tmp_path, monkeypatch):
    from braintrace._compiler import hidden_group

    # a KeyError raised inside braintrace's hidden-group pass while it handles the tanh: the
    # raising function is compiled as part of that module, as a bug of braintrace would be
    source = ("def crashing(self, eqn):\n"
              "    if eqn.primitive.name == 'tanh':\n"
              "        raise KeyError('a table the pass forgot to fill')\n"
              "    return original(self, eqn)\n")
    namespace = {"original": hidden_group.JaxprEvalForHiddenGroup._eval_eqn, "__name__": hidden_group.__name__}
    exec(compile(source, hidden_group.__file__, "exec"), namespace)
    monkeypatch.setattr(hidden_group.JaxprEvalForHiddenGroup, "_eval_eqn", namespace["crashing"])
    path = tmp_path / "crash.py"
    path.write_text(CRASH, encoding="utf-8")
    findings, errors = lint_file(str(path))
    assert not errors
    (finding,) = [f for f in findings if f.level is Level.ERROR]
    assert finding.rule_id == "ETL199"
    assert finding.line == 15, finding  # the tanh, not the factory (line 19)
    assert "while handling this line's `tanh`" in finding.message
    properties = finding_properties(finding)
    assert (properties["braintraceError"], properties["phase"]) == ("KeyError", "compile")


def test_with_nothing_to_go_by_an_internal_crash_stays_on_the_factory():
    exc = KeyError("nothing")
    compilation = bt.Compilation(error=exc, raw_jaxpr=object())  # raised after the step was traced
    locator = _Locator()
    (finding,) = findings_from_error(compilation, locator, "model", [])
    assert finding.rule_id == "ETL199" and finding.location == _Locator.factory


@pytest.mark.skipif(importlib.util.find_spec("brainpy") is None, reason="brainpy.state is not installed")
def test_a_brainpy_state_network_reads_cleanly(tmp_path):
    path = tmp_path / "ei.py"
    path.write_text('''
import brainstate
import braintrace
import brainpy.state as bps
import brainunit as u
import jax.numpy as jnp


class EI(brainstate.nn.Module):
    def __init__(self, n_in=4, n=12):
        super().__init__()
        self.neu = bps.LIF(n, V_th=1. * u.mV, tau=10. * u.ms)
        linear = lambda a, b: braintrace.nn.Linear(a, b, w_init=brainstate.init.KaimingNormal(unit=u.mS),
                                                    b_init=brainstate.init.ZeroInit(unit=u.mS))
        self.inp = bps.AlignPostProj(comm=linear(n_in, n), syn=bps.Expon.desc(n, tau=10. * u.ms),
                                     out=bps.CUBA.desc(scale=u.volt), post=self.neu)
        self.rec = bps.AlignPostProj(comm=linear(n, n), syn=bps.Expon.desc(n, tau=5. * u.ms),
                                     out=bps.CUBA.desc(scale=u.volt), post=self.neu)

    def update(self, x):
        spikes = self.neu.get_spike()
        self.inp(x)
        self.rec(spikes)
        return self.neu()


def etrace_target_ei():
    brainstate.environ.set(dt=0.1 * u.ms)
    return EI(), (jnp.ones((4,)),)
''', encoding="utf-8")
    findings, errors = lint_file(str(path))
    assert not errors, [e.message for e in errors]
    assert findings
    for finding in findings:
        assert not _clean(finding.message), finding.message
    # the compiler reaches the neuron through the first projection's `post` (attributes in sorted order)
    # and each synapse through the neuron; messages name them as the model does
    (merged,) = [f for f in findings if f.rule_id == "ETL028"]
    assert merged.message.startswith("neu.V, inp.syn.g, rec.syn.g feed each other"), merged.message
    assert ["inp", "post", "V"] in finding_properties(merged)["hiddenStatePaths"]
    assert any("brainpy.state.Expon" in str(p) for path in finding_properties(merged)["hiddenStatePaths"]
               for p in path)
    (recurrent,) = [f for f in findings
                    if f.rule_id == "ETL001" and finding_properties(f)["weight"] == "rec.comm.weight"]
    assert "drives rec.syn.g, neu.V" in recurrent.message


def test_a_state_shared_between_modules_is_named_along_the_shortest_path(tmp_path):
    path = tmp_path / "shared_cell.py"
    path.write_text('''
import brainstate
import braintrace
import jax.numpy as jnp


class Cell(brainstate.nn.Module):
    def __init__(self, n=4):
        super().__init__()
        self.w = braintrace.nn.Linear(n, n)
        self.h = brainstate.HiddenState(jnp.zeros(n))

    def update(self, x):
        self.h.value = 0.9 * self.h.value + self.w(x)
        return self.h.value


class Head(brainstate.nn.Module):
    def __init__(self, source):
        super().__init__()
        self.source = source  # reads the cell's state; sorts before `rnn`, so the compiler walks it first

    def update(self):
        return self.source.h.value.sum()


class Net(brainstate.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = Cell()
        self.head = Head(self.rnn)

    def update(self, x):
        self.rnn(x)
        return self.head()


def etrace_target_net():
    return Net(), (jnp.ones((4,)),)
''', encoding="utf-8")
    findings, errors = lint_file(str(path))
    assert not errors, [e.message for e in errors]
    (included,) = [f for f in findings if f.rule_id == "ETL001"]
    assert included.message == "rnn.w.weight learns online: its matmul here drives rnn.h"
    assert finding_properties(included)["weight"] == "rnn.w.weight"
    assert finding_properties(included)["weightPath"] == ["head", "source", "w", "weight"]


def test_a_norm_layers_weight_is_never_told_to_become_the_same_class():
    """braintrace.nn.LayerNorm *is* brainstate.nn.LayerNorm: no rename to it is advice."""
    findings, _ = lint_shared(fixture("own", "mean_subtracted.py") + "::conv_norm_if")
    (finding,) = [f for f in findings if f.rule_id == "ETL201"]
    assert "make norm.weight's layer a" not in finding.message
    assert "brainstate.nn.LayerNorm" in finding.message and "same class" in finding.message
    assert "etpLayer" not in finding_properties(finding) and finding.fix is None


def test_dropouts_global_random_state_is_not_something_to_create_in_init():
    findings, _ = lint_shared(fixture("compiler", "dropout_rng.py"))
    (finding,) = [f for f in findings if f.rule_id == "ETL029"]
    assert "__init__ or init_state" not in finding.message
    assert "brainstate.random.DEFAULT" in finding.message and "Dropout" in finding.message
    assert "does not change which weights learn online" in finding.message


def test_a_paramstate_passed_as_the_ops_input_is_told_to_move_not_to_be_wrapped():
    findings, _ = lint_shared(fixture("compiler", "relation_details.py") + "::etrace_target_weight_as_input")
    (finding,) = [f for f in findings if f.rule_id == "ETL002"]
    assert "wrap it in" not in finding.message
    assert "w is a ParamState" in finding.message and "braintrace.matmul(x, w)" in finding.message
    constant, _ = lint_shared(fixture("compiler", "relation_details.py") + "::etrace_target_constant_weight")
    (plain,) = [f for f in constant if f.rule_id == "ETL002"]
    assert "wrap it in brainstate.ParamState" in plain.message  # a real constant still hears that
