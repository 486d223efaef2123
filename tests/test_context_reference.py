"""The site's reference of what a check may read names every fact of the analysis context, each with what it holds.

docs/development/context.md is written from the code when the site is built (docs/hooks/context_facts.py):
one line per property and method of ``AnalysisContext``, then per field and property of each object those
hand out. A fact added without a docstring, or a field without a comment, would be a line that says
nothing: these tests fail it.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys

from helpers import REPO

from etrace_lint.analysis.context import AnalysisContext
from etrace_lint.analysis.plain_uses import PlainUse

SPEC = importlib.util.spec_from_file_location("context_facts", os.path.join(REPO, "docs", "hooks", "context_facts.py"))
context_facts = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = context_facts  # its dataclasses look their module up there
SPEC.loader.exec_module(context_facts)


def _public(cls: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls) if not name.startswith("_")}


def test_every_fact_of_the_context_has_a_line_that_says_what_it_holds():
    (context, *handed_out) = context_facts.records(REPO)
    assert context.name == "AnalysisContext"
    lines = {member.name.split("(")[0]: member for member in context.members}
    expected = _public(AnalysisContext) | {field for field in AnalysisContext.__dataclass_fields__}
    assert set(lines) == expected
    assert not [name for name, member in lines.items() if not member.what], "facts without a docstring"
    # the objects a check reads come with their fields: a plain use's weight, op and hidden states
    plain = next(record for record in handed_out if record.name == "PlainUse")
    assert {member.name for member in plain.members} >= set(PlainUse.__dataclass_fields__)
    assert {"EqnSite", "OwnerLayer", "ZeroTraceUse"} <= {record.name for record in handed_out}


def test_the_reference_is_a_page_of_the_site():
    with open(os.path.join(REPO, "docs", "development", "context.md"), encoding="utf-8") as handle:
        page = handle.read()
    assert "<!-- context-facts -->" in page and "braintrace_adapter/" in page
    with open(os.path.join(REPO, "mkdocs.yml"), encoding="utf-8") as handle:
        assert "development/context.md" in handle.read()
    table = context_facts.context_reference(REPO)
    assert "| `weight_paths` | `dict[StatePath, list[jv.Var]]` | The weights the step reads." in table


def test_the_rules_behind_gradient_free_weights_are_read_off_the_code():
    # the page names the rules whose facts make the property up and those that skip its weights: a rule that adds
    # its fact there, or reads the property, is named without an edit of the page
    rules = context_facts.gradient_free_rules(REPO)
    assert {"ETL214", "ETL215", "ETL216", "ETL220", "ETL221", "ETL222"} <= set(rules.facts)
    assert {"ETL201", "ETL207", "ETL208", "ETL209"} <= set(rules.skipping)
    assert not set(rules.facts) & set(rules.skipping)
    sentence = context_facts.gradient_free_sentence(REPO)
    assert "the union of ETL214's, ETL215's, ETL216's" in sentence and "ETL208 and ETL209, which deny" in sentence
    with open(os.path.join(REPO, "docs", "development", "context.md"), encoding="utf-8") as handle:
        page = handle.read()
    assert "<!-- gradient-free-rules -->" in page and "ETL214's, ETL215's" not in page


def test_only_the_adapter_imports_braintrace_in_the_analysis():
    # the page's promise: a braintrace release that moves its internals is absorbed in one package
    import ast
    import glob

    importing = []
    for path in glob.glob(os.path.join(REPO, "etrace_lint", "analysis", "*.py")):
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        for node in ast.walk(tree):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            if any(name == "braintrace" or name.startswith("braintrace.") for name in names):
                importing.append(os.path.basename(path))
    assert not importing, importing
