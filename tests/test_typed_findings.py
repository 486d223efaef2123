"""What acts on findings reads their typed fields: SARIF/JSON properties are only written."""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import re

from etrace_lint.core.advice import AdviceRow, Law, WeightFidelity
from etrace_lint.core.details import (
    Advice,
    Boundary,
    CompilerError,
    CompilerRecord,
    Measured,
    ProbeFailure,
    ProbeLeaf,
    ProbeSignal,
    StaticEvidence,
    VerifyHarness,
    VerifyLeaf,
    VerifyNotRun,
    VerifyWeight,
)
from etrace_lint.core.findings import Finding, Level, Location, Subject
from etrace_lint.core.registry import all_rules
from etrace_lint.core.rule import AnalysisRule, Hit
from etrace_lint.core.verdict import Verdict
from etrace_lint.rules.etl201_weight_through_plain_op import PlainOpPath
from etrace_lint.rules.etl204_no_etp_relation import NoEtpRelation
from etrace_lint.writers.properties import finding_properties

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.join(REPOSITORY, "etrace_lint")
# where a finding's properties are built from its typed fields: the one module that may name them
PROPERTIES_WRITER = os.path.join(ROOT, "writers", "properties.py")
# an attribute ``properties`` read off an object (``finding.properties``, ``f().properties``), not a module path
ATTRIBUTE = re.compile(r"[\w)\]]\.properties\b")
IMPORT = re.compile(r"^\s*(from|import)\s")
# a finding's properties read (``finding.properties``), or a document's (``["properties"]``, not written)
READS = re.compile(r"\.properties\b|\[\"properties\"\](?!\s*=)|\.get\(\"properties\"")


def _modules(*parts: str) -> list[str]:
    found = []
    for part in parts:
        path = os.path.join(ROOT, part)
        if path.endswith(".py"):
            found.append(path)
            continue
        found += [os.path.join(folder, name) for folder, _, names in os.walk(path)
                  for name in names if name.endswith(".py")]
    return sorted(found)


def test_fixes_verify_and_merge_never_read_properties_back():
    readers = _modules("fixes", "verify", os.path.join("writers", "merge.py"))
    assert len(readers) > 10
    found = [f"{os.path.relpath(path, ROOT)}:{number}: {line.strip()}" for path in readers
             for number, line in enumerate(open(path, encoding="utf-8"), start=1) if READS.search(line)]
    assert found == [], "read the finding's Subject (or, for shard logs, writers/own_logs.py) instead"


def test_only_own_logs_reads_an_output_document():
    # the pattern does find a document read where there is one
    assert READS.search('model = result.get("properties", {}).get("model", "")')
    own_logs = open(os.path.join(ROOT, "writers", "own_logs.py"), encoding="utf-8").read()
    assert READS.search(own_logs)


def _attribute_reads(path: str) -> list[str]:
    return [f"{os.path.relpath(path, REPOSITORY)}:{number}: {line.strip()}"
            for number, line in enumerate(open(path, encoding="utf-8"), start=1)
            if ATTRIBUTE.search(line) and not IMPORT.match(line)]


def test_no_module_but_the_properties_writer_touches_properties():
    rules = os.path.join(REPOSITORY, "rules")
    modules = [os.path.normpath(path) for path in _modules(".")]
    modules += sorted(os.path.join(rules, name) for name in os.listdir(rules) if name.endswith(".py"))
    assert PROPERTIES_WRITER in modules and len(modules) > 100
    found = [hit for path in modules if path != PROPERTIES_WRITER for hit in _attribute_reads(path)]
    assert found == [], "read the finding's typed fields; only writers/properties.py lays out properties"


def test_the_pattern_finds_an_attribute_read_and_not_a_module_path():
    assert ATTRIBUTE.search("weight = finding.properties.get('weight')")
    assert ATTRIBUTE.search("kind = findings[0].properties['braintraceKind']")
    assert not ATTRIBUTE.search("from .properties import finding_properties")


def test_findings_and_hits_carry_no_properties_dict():
    assert "properties" not in {field.name for field in dataclasses.fields(Finding)}
    assert "properties" not in {field.name for field in dataclasses.fields(Hit)}


def _leaf(leaf: str) -> VerifyLeaf:
    return VerifyLeaf("d_rtrl", 4, "cell.W", leaf, "approximate", "exact", 0.25, 0.9, None, "cpu")


WEIGHT = Subject(weight="cell.W", weight_path=("cell", 0, "W"), primitive="dot_general", hidden_states=("h",),
                 hidden_state_paths=(("h",),))
FINDINGS = [
    Finding("ETL001", Level.NOTE, "learns", "m", Location("/m.py", 3), subject=WEIGHT,
            details=CompilerRecord("relation_included", "info", "text", (1, 2), "ValueError"),
            control_flow=(Boundary("scan", 2, 5), Boundary("jit", 9, 1, "step", "other.py")),
            measured=(Measured("ETL411", "zero", ProbeSignal("d_rtrl", 3, None, False,
                                                             (ProbeLeaf("['weight']", 0.0, 1.5, None),))),
                      Measured("ETL402", "none", VerifyWeight(_leaf(""), (_leaf("a"), _leaf("b")), "ETL005"))),
            static_evidence=(StaticEvidence("ETL003", "same step", 7),)),
    Finding("ETL100", Level.ERROR, "raises", "m", Location("/m.py", 4), subject=Subject(primitive="tanh"),
            details=CompilerError("KeyError", "compile", "text")),
    Finding("ETL201", Level.ERROR, "plain", "m", Location("/m.py", 5), subject=WEIGHT,
            details=PlainOpPath("cell.W", ("h",), "dot_general", False, "use braintrace.matmul",
                                operand_shapes=((3,), (3, 4)))),
    Finding("ETL204", Level.WARNING, "none", "m", Location("/m.py", 6),
            details=NoEtpRelation(2, 0, "0.2.8", True, ("cell.buf",), 1, ("ShortTermState",))),
    Finding("ETL413", Level.ERROR, "raises", "m", Location("/m.py", 7), subject=WEIGHT,
            details=ProbeFailure("d_rtrl", "TypeError", 8, (3, 4), ())),
    Finding("ETL405", Level.NOTE, "not run", "m", Location("/m.py", 8), details=VerifyNotRun("pp_prop", "cpu")),
    Finding("ETL406", Level.ERROR, "broken", "m", Location("/m.py", 9),
            details=VerifyHarness("d_rtrl", 4, 1.0, 2.0, "cpu")),
    Finding("ETL304", Level.WARNING, "advice", "m", Location("/m.py", 10), subject=Subject(weight="cell.W"),
            details=Advice("d_rtrl", AdviceRow(
                "/m.py::m", "pp_prop", {"decay_or_rank": 0.9}, True, True, None, 4096, Law(0, 2048, 0), 8192, 3.5,
                weights=(WeightFidelity("cell.W['weight']", 0.97, 0.2, Verdict.APPROXIMATION),), batch=2,
                measured_batch=2, steps=8, hidden_groups=1, recommended=True))),
    Finding("ETL301", Level.WARNING, "unused", "", Location("/m.py", 11),
            subject=Subject(suppression_form="noqa", suppression_codes=("ETL201",))),
]


def test_the_cache_round_trips_the_typed_fields():
    for finding in FINDINGS:
        stored = json.loads(json.dumps(finding.to_json()))
        assert "properties" not in stored
        back = Finding.from_json(stored)
        assert (back, back.details, back.control_flow, back.measured, back.static_evidence) == (
            finding, finding.details, finding.control_flow, finding.measured, finding.static_evidence)
        assert json.dumps(finding_properties(back)) == json.dumps(finding_properties(finding))


def test_properties_are_laid_out_from_the_typed_fields():
    record, error, plain, counts, failure, not_run, harness, advice, unused = map(finding_properties, FINDINGS)
    assert list(record) == ["braintraceKind", "braintraceLevel", "braintraceMessage", "weight", "weightPath",
                            "hiddenStates", "hiddenStatePaths", "primitive", "iterations", "controlFlow",
                            "braintraceError", "measured", "staticEvidence"]
    assert record["weightPath"] == ["cell", 0, "W"] and record["iterations"] == [1, 2]
    assert record["controlFlow"][1] == {"kind": "jit", "line": 9, "column": 1, "name": "step", "file": "other.py"}
    assert record["measured"][0]["probe"]["wholeWeight"] is False
    assert [leaf["leaf"] for leaf in record["measured"][1]["verify"]["leaves"]] == ["a", "b"]
    assert list(error) == ["braintraceError", "phase", "braintraceMessage", "primitive"]
    assert plain == {"primitive": "dot_general", "partial": False, "operandShapes": [[3], [3, 4]], "weight": "cell.W",
                     "weightPath": ["cell", 0, "W"], "hiddenStates": ["h"], "hiddenStatePaths": [["h"]]}
    assert counts == {"weightCount": 2, "hiddenStateCount": 0}
    assert list(failure) == ["probe", "weight", "weightPath", "hiddenStates", "hiddenStatePaths"]
    assert failure["probe"]["gradientShape"] == []
    assert not_run == {"verify": {"algorithm": "pp_prop", "device": "cpu"}}
    assert list(harness["verify"]) == ["algorithm", "steps", "onlineLoss", "bpttLoss", "device"]
    alternative = advice["advice"]["alternative"]
    assert advice == {"advice": {"algorithm": "d_rtrl", "alternative": alternative}, "weight": "cell.W"}
    assert alternative["algorithm"] == "pp_prop" and alternative["trace_bytes_law"] == {"c0": 0, "c1": 2048, "c2": 0}
    assert alternative["weights"] == [{"weight": "cell.W['weight']", "cosine": 0.97, "relative_error": 0.2,
                                       "verdict": "approximate"}]
    assert unused == {"codes": ["ETL201"], "form": "noqa"}


def _record_about(subject: Subject) -> dict:
    finding = Finding("ETL015", Level.WARNING, "words", "m", Location("/m.py", 3), subject=subject,
                      details=CompilerRecord("scan_descent_no_relations", "warning", "text"))
    properties = finding_properties(finding)
    back = finding_properties(Finding.from_json(json.loads(json.dumps(finding.to_json()))))
    assert back == properties
    return {key: value for key, value in properties.items() if not key.startswith("braintrace")}


def test_one_weight_is_a_weight_several_are_weights_whatever_made_the_finding():
    # a finding that names one weight, as its own or in a list, has it as `weight`
    assert _record_about(Subject(weights=("w",), weight_paths=(("w",),))) == {"weight": "w", "weightPath": ["w"]}
    # several: `weights`, its own first, beside its `weight`
    blocked = _record_about(Subject(weight="cell.Wr", weight_path=("cell", "Wr"), weights=("cell.Wh",),
                                    weight_paths=(("cell", "Wh"),)))
    assert blocked == {"weight": "cell.Wr", "weightPath": ["cell", "Wr"], "weights": ["cell.Wr", "cell.Wh"],
                       "weightPaths": [["cell", "Wr"], ["cell", "Wh"]]}
    assert _record_about(Subject(weights=("a.w", "b.w"), weight_paths=(("a", "w"), ("b", "w")),
                                 hidden_states=("h",), hidden_state_paths=(("layers", 0, "h"),))) == {
        "weights": ["a.w", "b.w"], "weightPaths": [["a", "w"], ["b", "w"]], "hiddenStates": ["h"],
        "hiddenStatePaths": [["layers", 0, "h"]]}
    # a state that is neither is not called a weight
    assert _record_about(Subject(state="spare", state_path=("spare",))) == {"state": "spare", "statePath": ["spare"]}
    # a path is printed only where every one is known
    partly_known = Subject(hidden_states=("h", "c"), hidden_state_paths=(("h",),))
    assert _record_about(partly_known) == {"hiddenStates": ["h", "c"]}


def _json_type(value: object) -> str:
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array",
            dict: "object"}[type(value)]


def test_each_property_key_has_one_json_type_across_every_rule():
    """A key means one thing: ``weights`` is always a list of names, never a count (``weightCount``)."""
    typed: dict[str, set[str]] = {}
    for path in glob.glob(os.path.join(REPOSITORY, "tests", "data", "golden", "*", "*.json")):
        with open(path, encoding="utf-8") as handle:
            findings = json.load(handle)["findings"]
        for finding in findings:
            for key, value in finding.get("properties", {}).items():
                if value is not None:  # a fact its maker did not learn
                    typed.setdefault(key, set()).add(_json_type(value))
    assert typed and {key: types for key, types in typed.items() if len(types) > 1} == {}
    assert typed["weights"] == typed["hiddenStates"] == {"array"}
    assert typed["weightCount"] == typed["hiddenStateCount"] == {"number"}


def test_each_analysis_rule_declares_its_violations():
    rules = [rule for rule in all_rules().values() if isinstance(rule, AnalysisRule)]
    assert rules and all(rule.violations for rule in rules)
    names = [violation.__name__ for rule in rules for violation in rule.violations]
    assert len(names) == len(set(names)), "the cache reads a violation back by its class name"
