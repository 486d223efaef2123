"""MkDocs hook: the pages written from the code each time the site is built.

- one page per rule (``rules/etl208.md``) from the rule and the Markdown beside it, and their entries
  in the navigation, by family;
- the grouped index of rules, where ``rules/index.md`` says ``<!-- rules-index -->``;
- the configuration reference from the options table, where a page says ``<!-- options-table -->``.

Nothing generated is kept in the repository, so the site cannot drift from the rules or the options.
"""

from __future__ import annotations

from mkdocs.structure.files import File

from etrace_lint.cli.docs import options_markdown, rule_page, rule_page_file, rules_index, rules_nav
from etrace_lint.core.registry import all_rules

RULES_INDEX = "<!-- rules-index -->"
OPTIONS_TABLE = "<!-- options-table -->"


def on_config(config):
    """Put each family of rules' pages under "Rules" in the navigation, after what mkdocs.yml lists there."""
    families = rules_nav()
    for entry in config["nav"]:
        if isinstance(entry, dict) and "Rules" in entry:
            # `mkdocs serve` builds again from the same configuration: add the families once
            entry["Rules"] = [page for page in entry["Rules"] if page not in families] + families
            return config
    raise ValueError('mkdocs.yml: the navigation has no "Rules" section to put the rules\' pages in')


def on_files(files, config):
    for rule in all_rules().values():
        files.append(File.generated(config, rule_page_file(rule.id), content=rule_page(rule)))
    return files


def on_page_markdown(markdown, page, config, files):
    if RULES_INDEX in markdown:
        markdown = markdown.replace(RULES_INDEX, rules_index())
    if OPTIONS_TABLE in markdown:
        markdown = markdown.replace(OPTIONS_TABLE, options_markdown())
    return markdown
