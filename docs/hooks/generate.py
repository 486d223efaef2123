"""MkDocs hook: the pages written from the code each time the site is built.

- one page per rule (``rules/etl208.md``) from the rule and the Markdown beside it, with a whole model
  that triggers it, cut from the test fixtures, and what the lint needs for it (``examples.py``), or why
  no model does; and their entries in the navigation, by family;
- the grouped index of rules, where ``rules/index.md`` says ``<!-- rules-index -->``;
- the configuration reference from the options table, where a page says ``<!-- options-table -->``;
- the reference of what an analysis rule's check may read (``context_facts.py``), where a page says
  ``<!-- context-facts -->``, and which rules make up and skip ``gradient_free_weights``, where it says
  ``<!-- gradient-free-rules -->``.

Nothing generated is kept in the repository, so the site cannot drift from the rules or the options.
"""

from __future__ import annotations

import importlib.util
import os
import sys

from mkdocs.structure.files import File

from etrace_lint.cli.docs import options_markdown, rule_page, rule_page_file, rules_index, rules_nav
from etrace_lint.core.registry import all_rules


def _sibling(name: str):
    """A module beside this hook (MkDocs loads a hook by its path, so its folder is not importable)."""
    spec = importlib.util.spec_from_file_location(f"etrace_lint_docs_{name}",
                                                  os.path.join(os.path.dirname(__file__), f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


examples = _sibling("examples")
context_facts = _sibling("context_facts")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

RULES_INDEX = "<!-- rules-index -->"
OPTIONS_TABLE = "<!-- options-table -->"
CONTEXT_FACTS = "<!-- context-facts -->"
GRADIENT_FREE_RULES = "<!-- gradient-free-rules -->"


def on_config(config):
    """Put each family of rules' pages under "Rules" in the navigation, after what mkdocs.yml lists there."""
    families = rules_nav()
    for entry in config["nav"]:
        if isinstance(entry, dict) and "Rules" in entry:
            # `mkdocs serve` builds again from the same configuration: add the families once
            entry["Rules"] = [page for page in entry["Rules"] if page not in families] + families
            return config
    raise ValueError('mkdocs.yml: the navigation has no "Rules" section to put the rules\' pages in')


def _braintrace_line(versions: tuple[str, str | None] | None) -> str:
    if versions is None:
        return ""
    first, until = versions
    return f" on braintrace {first} or later" if until is None else f" on braintrace {first} (not {until} or later)"


def model_section(rule, fixtures: list[str]) -> str:
    """The rule's page's "A model that triggers it": the shortest model the test fixtures give, with what the
    lint needs (a flag, a pyproject.toml, a braintrace line); why there is none; or nothing (a retired rule)."""
    if rule.id in examples.NO_MODEL:
        return f"## A model that triggers it\n\n{examples.NO_MODEL[rule.id]}\n"
    model = examples.example_model(rule, REPO, fixtures)
    if model is None:
        return ""
    settings = ("" if not model.settings else
                f"With this `pyproject.toml` beside it:\n\n```toml\n{model.settings}```\n\n")
    flags = f" with `{' '.join(model.flags)}`" if model.flags else ""
    return (f"## A model that triggers it\n\n```python\n{model.source}```\n\n{settings}"
            f"Linting this file{flags}{_braintrace_line(model.braintrace)} reports {rule.id} on the line marked "
            f"`# {rule.id}`. It is cut from the test suite's `{model.fixture}` (the target `{model.factory}`), "
            f"and the suite lints it as shown here.\n")


def on_files(files, config):
    fixtures = examples.fixture_files(REPO)
    for rule in all_rules().values():
        files.append(File.generated(config, rule_page_file(rule.id),
                                    content=rule_page(rule, model_section(rule, fixtures))))
    return files


def on_page_markdown(markdown, page, config, files):
    if RULES_INDEX in markdown:
        markdown = markdown.replace(RULES_INDEX, rules_index())
    if OPTIONS_TABLE in markdown:
        markdown = markdown.replace(OPTIONS_TABLE, options_markdown())
    if CONTEXT_FACTS in markdown:
        markdown = markdown.replace(CONTEXT_FACTS, context_facts.context_reference(REPO))
    if GRADIENT_FREE_RULES in markdown:
        markdown = markdown.replace(GRADIENT_FREE_RULES, context_facts.gradient_free_sentence(REPO))
    return markdown
