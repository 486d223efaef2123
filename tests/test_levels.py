"""A finding's level says what happens to learning, and it is the level its rule documents.

error: the model cannot be compiled or trained online, or a gradient is wrong;
warning: a weight silently gets no online gradient, or only part of it;
note: worth knowing, the gradient is still what the algorithm promises.
braintrace grades its records by its own measure; that grade is kept in
``properties.braintraceLevel`` and never decides the finding's level.
"""

from __future__ import annotations

import functools
import glob
import os
import re

import braintrace
import pytest
from helpers import FIXTURES, REPO, fixture, lint_shared
from in_process import run_cli

from etrace_lint.analysis import braintrace_adapter
from etrace_lint.core import registry
from etrace_lint.core.findings import Level
from etrace_lint.writers.properties import finding_properties

# every model the test suite lints for its compiler records, errors and own rules
CORPUS = sorted(
    glob.glob(os.path.join(FIXTURES, "compiler", "*.py"))
    + glob.glob(os.path.join(FIXTURES, "own", "*.py"))
    + glob.glob(os.path.join(FIXTURES, "clean", "*.py"))
    + glob.glob(os.path.join(REPO, "examples", "models", "*.py")))


@functools.lru_cache(maxsize=None)
def corpus_findings() -> tuple:
    """Every finding of the corpus, notes included (one lint per session, shared with the tests that check
    each fixture's markers)."""
    found = []
    for path in CORPUS:
        findings, _ = lint_shared(path)
        found.extend(findings)
    return tuple(found)


def test_every_finding_has_its_rules_documented_level():
    rules = registry.all_rules()
    wrong = [(f.rule_id, f.level.value, rules[f.rule_id].level.value, f.target)
             for f in corpus_findings() if f.level is not rules[f.rule_id].level]
    assert not wrong, f"braintrace {braintrace.__version__}: {wrong}"


def test_the_corpus_reaches_the_rules_whose_level_changed_with_the_record():
    # these kinds come from braintrace with another level than the rule documents: the
    # test above would hold nothing if none of them were in the corpus
    by_rule = {}
    for finding in corpus_findings():
        by_rule.setdefault(finding.rule_id, set()).add(finding_properties(finding).get("braintraceLevel"))
    if braintrace_adapter.adds_same_step_gradients():
        assert "warning" in by_rule["ETL003"]  # an ordinary readout: braintrace warns
    else:  # braintrace 0.2.6: that readout gets no online gradient, and ETL209 replaces ETL003
        assert "ETL209" in by_rule
    assert "warning" in by_rule["ETL017"]  # a weight-free loop's inputs detached
    assert "error" in by_rule["ETL104"]  # one kind, two rules: the refused op is ETL104, not ETL022
    assert by_rule["ETL022"] == {"warning"}


def test_the_documented_level_is_the_one_etrace_lint_rule_shows():
    for rule_id in ("ETL003", "ETL011", "ETL017", "ETL025"):
        proc = run_cli("rule", rule_id)
        assert proc.returncode == 0, proc.stderr
        assert "note" in proc.stdout.lower(), proc.stdout


def test_verify_findings_take_their_rules_levels():
    from etrace_lint.core.findings import Location
    from etrace_lint.verify.findings import FindingMaker

    class _Locator:
        factory = Location("model.py", 3)
        factory_related = Location("model.py", 3, 1, "target factory")

    class _Context:
        locator = _Locator()

    maker = FindingMaker(_Context(), "model", [])
    rules = registry.all_rules()
    assert maker.not_run("--verify did not run").level is rules["ETL405"].level
    assert maker.harness_mismatch("d_rtrl", 4, 1.0, 2.0).level is rules["ETL499"].level


def test_a_model_built_the_ordinary_way_passes_the_default_run(tmp_path):
    # a recurrent layer of braintrace ops plus a braintrace.nn.Linear readout; the default run is
    # served from the cache the run with every note filled
    cache = str(tmp_path / "cache")
    shown = run_cli(fixture("clean", "ordinary.py"), "--cache-dir", cache, "-j", "1", "--show-info")
    proc = run_cli(fixture("clean", "ordinary.py"), "--cache-dir", cache, "-j", "1")
    # an LRU's output projection feeds only the readout: what the compiler calls an exclusion
    # behind another weight is a weight that reaches no hidden state
    assert "ETL005" not in shown.stdout
    # braintrace's own LSTMCell, whose input, candidate and forget gates the learning-signal probe measures at 2.00x
    # BPTT's at one step (ETL412): braintrace's doing, a note that --show-info shows and the default run keeps quiet
    doubled = [line for line in shown.stdout.splitlines() if re.match(r"\S+:\d+:\d+: ETL412 ", line)]
    assert len(doubled) == 3 and all("[etrace_target_lstm_readout]" in line for line in doubled), shown.stdout
    others = [line for line in proc.stdout.splitlines() if re.match(r"\S+:\d+:\d+: ETL\d{3} ", line)]
    assert not any(" ETL412 " in line for line in others), proc.stdout
    if not braintrace_adapter.adds_same_step_gradients():
        # braintrace 0.2.6 adds no same-step gradient: that readout does not learn online, and the run says so
        assert others and all(" ETL209 " in line for line in others) and "ETL003" not in shown.stdout
        assert "C_re.weight gets no online gradient on braintrace" in shown.stdout
        assert proc.returncode == 1, proc.stdout + proc.stderr
        return
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert others == [], proc.stdout
    assert "ETL003" in shown.stdout
    assert "C_re.weight reaches no hidden state" in shown.stdout


@pytest.mark.parametrize("rule_id, level", [
    ("ETL003", Level.NOTE), ("ETL011", Level.NOTE), ("ETL017", Level.NOTE), ("ETL025", Level.NOTE),
    ("ETL005", Level.WARNING), ("ETL006", Level.WARNING), ("ETL201", Level.WARNING), ("ETL022", Level.WARNING),
    ("ETL016", Level.ERROR), ("ETL030", Level.ERROR), ("ETL104", Level.ERROR),
])
def test_levels_follow_what_happens_to_the_weight(rule_id, level):
    assert registry.all_rules()[rule_id].level is level
