"""Every weight and hidden state a finding's message names is in its properties, under the keys every rule
shares: ``weight`` / ``weights`` and ``hiddenStates``, each with its paths.

The names are the model's own: each fixture target's model is built again here and its ParamStates and
HiddenStates listed by brainstate, so the check does not read back what the linter wrote. A SARIF or JSON
consumer then lists what a finding concerns without parsing its message.
"""

from __future__ import annotations

import os
import re

import brainstate
import pytest
from golden import CORPORA
from helpers import REPO, shared_results

from etrace_lint.config.environ import environ_context
from etrace_lint.core.findings import Finding
from etrace_lint.discovery.discover import discover
from etrace_lint.engine.fresh_state import target_state
from etrace_lint.engine.targets import load_target
from etrace_lint.writers.properties import finding_properties

# the fixture corpus the golden snapshots lint: every rule's fixtures, without the files that hold no model
FILES = sorted({path for corpus in CORPORA if corpus.name == "fixtures" for part in corpus.paths
                if not part.startswith("tests/fixtures/bad")
                for path in ([os.path.join(REPO, part)] if part.endswith(".py") else
                             [os.path.join(folder, name) for folder, _, names in os.walk(os.path.join(REPO, part))
                              for name in names if name.endswith(".py")])})
# a state named like an English word its messages use ("a ShortTermState") cannot be told apart by its name
WORDS = frozenset({"a"})
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")


def _shown(path: tuple[object, ...]) -> str | None:
    """A state's path as a message names it (``layers[1].h``); None for a library's own key."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif isinstance(part, str) and _IDENTIFIER.match(part):
            text += f".{part}" if text else part
        else:
            return None
    return text or None


def _model_states(spec) -> dict[str, str]:
    """Each state of the target's model by the name a message gives it: ``weight``, ``hidden`` or ``other``.

    Built as a lint builds it, and what the factory changed of brainstate's settings undone after."""
    with target_state():
        loaded = load_target(spec, REPO)
        model = loaded.model
        states = brainstate.graph.states(model)
        if not any(isinstance(state, brainstate.HiddenState) for state in states.values()):
            with environ_context(loaded.environ):
                brainstate.nn.init_all_states(model, **({} if loaded.batch_size is None
                                                        else {"batch_size": loaded.batch_size}))
            states = brainstate.graph.states(model)
    kinds = {}
    for path, state in states.items():
        name = _shown(tuple(path))
        if name is None or name in WORDS:
            continue
        kinds[name] = ("weight" if isinstance(state, brainstate.ParamState)
                       else "hidden" if isinstance(state, brainstate.HiddenState) else "other")
    return kinds


def _named(message: str, name: str) -> bool:
    """Whether ``message`` names the state ``name`` as a whole (``w``, not the ``w`` of ``w.weight``)."""
    return re.search(rf"(?<![\w.\[]){re.escape(name)}(?![\w\[]|\.\w)", message) is not None


def _printed(finding: Finding) -> tuple[set[str], set[str]]:
    """The weights and hidden states a finding's properties list, checked for their paths on the way."""
    properties = finding_properties(finding)
    weights = set(properties.get("weights") or ())
    if "weights" in properties:
        assert len(properties.get("weightPaths") or ()) == len(properties["weights"]), properties
    if "weight" in properties:
        weights.add(properties["weight"])
        assert properties.get("weightPath"), properties
    hidden = set(properties.get("hiddenStates") or ())
    if hidden:
        assert len(properties.get("hiddenStatePaths") or ()) == len(properties["hiddenStates"]), properties
    return weights, hidden


def _unlisted(path: str) -> list[str]:
    specs = {spec.factory: spec for spec in discover([path], REPO).targets}
    problems = []
    for factory, result in shared_results(path).items():
        if not result.findings:
            continue
        kinds = _model_states(specs[factory])
        for finding in result.findings:
            weights, hidden = _printed(finding)
            named = {name: kind for name, kind in kinds.items() if _named(finding.message, name)}
            missing = sorted(name for name, kind in named.items()
                             if kind == "weight" and name not in weights or kind == "hidden" and name not in hidden)
            # and what the properties call a weight or a hidden state is one
            wrong = sorted(name for name in weights if kinds.get(name, "weight") != "weight")
            wrong += sorted(name for name in hidden if kinds.get(name, "hidden") != "hidden")
            if missing or wrong:
                problems.append(f"{factory} {finding.rule_id}: not listed {missing}, listed as the wrong kind "
                                f"{wrong}: {finding.message}")
    return problems


@pytest.mark.parametrize("path", FILES, ids=lambda path: os.path.relpath(path, os.path.join(REPO, "tests", "fixtures")))
def test_every_weight_and_hidden_state_a_message_names_is_in_its_properties(path):
    assert _unlisted(path) == []


def test_the_corpus_covers_the_rules_that_name_states_only_in_words():
    assert len(FILES) > 30
    names = {os.path.relpath(path, REPO) for path in FILES}
    assert {"tests/fixtures/compiler/control_flow.py", "tests/fixtures/own/no_relation.py",
            "tests/fixtures/compiler/output_bypass.py", "tests/fixtures/compiler/errors_param_write.py"} <= names


def test_a_name_is_matched_whole():
    assert _named("w learns online", "w") and _named("reaches h, c", "c")
    assert not _named("w.weight learns online", "w") and not _named("cell.w learns", "w")
    assert not _named("layers[1].h", "layers") and _named("it drives layers[1].h", "layers[1].h")


# findings whose message names no weight, or names it only in words a program would have to parse: what
# each is about, as the fixture's model has it
ABOUT = [
    ("compiler/control_flow.py", "etrace_target_stacked_weights", "ETL012", {"weight": "ws"}),
    ("compiler/control_flow.py", "etrace_target_long_scan_plain", "ETL015", {"weight": "w"}),
    ("compiler/control_flow.py", "etrace_target_weight_in_while", "ETL016", {"weight": "w"}),
    ("compiler/control_flow.py", "etrace_target_opaque_cond_weight", "ETL030", {"weight": "w"}),
    ("compiler/control_flow.py", "etrace_target_long_scan", "ETL013", {"weight": "w", "hiddenStates": ["h"]}),
    ("compiler/errors_param_write.py", "etrace_target_hebbian", "ETL102", {"weight": "w"}),
    ("compiler/relation_details.py", "etrace_target_weight_as_input", "ETL002", {"weight": "w"}),
    ("own/no_relation.py", "etrace_target_untrainable", "ETL204", {"weight": "gain", "hiddenStates": ["h"]}),
    ("own/buffered_input.py", "etrace_target_unread", "ETL029", {"state": "spare"}),
]


@pytest.mark.parametrize(("path", "factory", "rule", "expected"), ABOUT, ids=[f"{rule}-{factory}"
                                                                             for _, factory, rule, _ in ABOUT])
def test_a_finding_lists_what_it_is_about_where_its_message_does_not_name_it(path, factory, rule, expected):
    result = shared_results(os.path.join(REPO, "tests", "fixtures", path))[factory]
    listed = [{key: finding_properties(f).get(key) for key in expected} for f in result.findings if f.rule_id == rule]
    assert listed and all(found == expected for found in listed), listed
    # a state that is neither a weight nor a hidden state is not called one
    assert all("weight" not in finding_properties(f) for f in result.findings if f.rule_id == rule
               and "state" in expected)
