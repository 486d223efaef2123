"""Rule docs and the configuration reference: ``etrace-lint rule ETL005``, ``etrace-lint rules`` and the
documentation site's generated pages.

The site (``mkdocs build``; its hook is ``docs/hooks/generate.py``) writes one page per rule from
:func:`rule_page`, the grouped index of rules from :func:`rules_index`, and the configuration
reference from :func:`options_markdown` (``options.OPTIONS``) each time it is built, so none of them
is edited by hand and none can drift from the code.
"""

from __future__ import annotations

import argparse
import re
import sys

from ..config.options import OPTIONS, Option, did_you_mean_rule, option_for_flag
from ..core.exit_codes import EXIT_ERROR, EXIT_OK
from ..core.registry import active_rules, all_rules
from ..core.rule import Rule, rule_page_path

# the families of rule ids, as the rules index groups them: (first, last, title, what they come from)
RULE_GROUPS = (
    (1, 99, "Compiler records", "braintrace's compiler recorded a decision about a weight or a region"),
    (100, 199, "Compiler and tracing errors", "the model cannot be traced or compiled for online learning"),
    (200, 299, "etrace-lint's own analyses", "what the compiler does not say: plain ops, zero eligibility "
                                             "traces, states it does not follow"),
    (300, 399, "Suppressions and advice", "the linter's own comments, and the learning-rule advisor "
                                          "(`--advise`)"),
    (400, 499, "Measured gradients", "`--verify` and the learning-signal probe measure online gradients "
                                     "against BPTT"),
)
# the first braintrace the package supports (pyproject's dependency): what a rule whose text names no
# version concerns
OLDEST_BRAINTRACE = "0.2.6"
_VERSION = re.compile(r"\bbraintrace (\d+\.\d+\.\d+)\b")


def _find_rule(wanted: str) -> Rule | None:
    rules = all_rules()
    return rules.get(wanted.upper()) or next((r for r in rules.values() if r.name == wanted), None)


def main_rule(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: etrace-lint rule RULE_ID  (an id such as ETL005, or a rule name)", file=sys.stderr)
        return EXIT_ERROR
    wanted = argv[0].strip()
    rule = _find_rule(wanted)
    if rule is None:
        print(f"etrace-lint: error: unknown rule {wanted!r}{did_you_mean_rule(wanted)}", file=sys.stderr)
        return EXIT_ERROR
    sys.stdout.write(format_rule(rule))
    return EXIT_OK


def format_rule(rule: Rule) -> str:
    state = ", retired" if rule.retired else ("" if rule.enabled else ", off by default")
    header = f"{rule.id} {rule.name} ({rule.level.value}{state})"
    body = rule.docs.split("\n", 1)[1] if rule.docs.startswith("# ") else rule.docs
    text = f"{header}\n\n{rule.summary}.\n\n{body.strip()}\n"
    if rule.opt_in_flag:
        text += f"\nThis rule {_runs_when(rule).replace('`', '')}.\n"
    return text


def runs_by_default(rule: Rule) -> bool:
    """Whether a rule's flag is on unless turned off (the probe's rules), so a default run reports it."""
    return bool(rule.opt_in_flag) and option_for_flag(rule.opt_in_flag).default is True


def _runs_when(rule: Rule) -> str:
    option = option_for_flag(rule.opt_in_flag)
    if runs_by_default(rule):
        return f"runs unless `{option.negation}` turns it off"
    return f"runs only with `{rule.opt_in_flag}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rules_markdown() -> str:
    """``etrace-lint rules --format markdown``: every active rule, in id order."""
    lines = ["| Rule | Name | Level | What it reports |", "| --- | --- | --- | --- |"]
    for rule in active_rules().values():
        notes = []
        if rule.opt_in_flag and not runs_by_default(rule):
            notes.append(f"needs `{rule.opt_in_flag}`")
        elif not rule.enabled:
            notes.append("off by default")
        suffix = f" ({'; '.join(notes)})" if notes else ""
        lines.append(f"| {rule.id} | `{rule.name}` | {rule.level.value} | {_cell(rule.summary)}{suffix} |")
    return "\n".join(lines) + "\n"


def rules_text() -> str:
    lines = []
    for rule in all_rules().values():
        status = " (retired)" if rule.retired else ("" if rule.enabled else " (off by default)")
        lines.append(f"{rule.id}  {rule.level.value:<7}  {rule.name}{status}: {rule.summary}")
    return "\n".join(lines) + "\n"


def main_rules(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="etrace-lint rules", description="List every rule.")
    parser.add_argument("--format", choices=("text", "markdown"), default="text",
                        help="markdown: a Markdown table")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_ERROR
    sys.stdout.write(rules_markdown() if args.format == "markdown" else rules_text())
    return EXIT_OK


def _value_words(option: Option) -> str:
    words = {"flag": "true or false", "int": "integer", "float": "number", "level": "note, warning or error",
             "list": "strings", "paths": "strings", "folder": "string", "levels": "table: rule = level",
             "per-file-ignores": "table: glob = rules", "compile-options": "table", "environ": "table: key = value"}
    return words.get(option.kind, "string")


def options_markdown() -> str:
    """The configuration reference: every option, its flags, its key and its default."""
    lines = ["| Command line | `[tool.etrace-lint]` | Value | Default | What it does |",
             "| --- | --- | --- | --- | --- |"]
    for option in OPTIONS:
        if option.positional:
            flags = f"`{option.name.upper()}...`"
        else:
            flags = ", ".join(f"`{flag}{f' {option.metavar}' if option.metavar else ''}`" for flag in option.flags)
        key = f"`{option.key}`" if option.key else ""
        default = f"`{option.default_text()}`" if option.default_text() else ""
        if option.shown_default and " " in option.shown_default:
            default = _cell(option.shown_default)
        value = " \\| ".join(option.choices) if option.choices else _value_words(option) if option.key else ""
        lines.append(f"| {flags} | {key} | {value} | {default} | {_cell(option.help)} |")
    adding = [f"`{option.flag}`" for option in OPTIONS if option.combine != "replace" and option.key]
    lines += ["", f"A flag replaces the file's value, except {', '.join(adding[:-1])} and {adding[-1]}, which add "
                  "to it (`--environ` adds keys or replaces them). A key such as `verify.steps` is `steps` in "
                  "`[tool.etrace-lint.verify]`."]
    return "\n".join(lines) + "\n"


def rule_group(rule_id: str) -> tuple[int, int, str, str]:
    """The family of ``rule_id`` in :data:`RULE_GROUPS`."""
    number = int(rule_id[3:])
    return next(group for group in RULE_GROUPS if group[0] <= number <= group[1])


def braintrace_versions(rule: Rule) -> str:
    """Which braintrace versions the rule concerns, in words: those its documentation names, else all."""
    named = sorted(set(_VERSION.findall(rule.docs)), key=lambda v: tuple(map(int, v.split("."))))
    if named:
        return f"braintrace {' and '.join(named)}: the text below says how they differ"
    if rule.record_kinds:  # a record not every braintrace makes: the versions whose compiler makes it
        kinds = " or ".join(f"`{kind}`" for kind in rule.record_kinds)
        return f"every braintrace ({OLDEST_BRAINTRACE} and later) whose compiler records {kinds}"
    return f"every supported braintrace ({OLDEST_BRAINTRACE} and later)"


def _status(rule: Rule) -> str:
    if rule.retired:
        return "retired: the id is kept and never reused, and the rule reports nothing"
    if rule.opt_in_flag:
        return _runs_when(rule)
    return "on by default" if rule.enabled else "off by default: select it by id or name"


def rule_page(rule: Rule, model: str = "") -> str:
    """The rule's page on the documentation site: its facts, then the text ``etrace-lint rule`` prints, with
    ``model`` (a section of Markdown: a whole model that triggers the rule) before ``## How to fix``."""
    body = rule.docs.split("\n", 1)[1] if rule.docs.startswith("# ") else rule.docs
    if model:
        head, fix, tail = body.partition("## How to fix")
        body = f"{head.rstrip()}\n\n{model.strip()}\n\n{fix}{tail}" if fix else f"{body.rstrip()}\n\n{model.strip()}\n"
    first, last, group, _ = rule_group(rule.id)
    facts = [("Name", f"`{rule.name}`"), ("Level", rule.level.value),
             ("Runs", _status(rule)), ("Family", f"[{group}](index.md#etl{first:03d}-etl{last:03d}) "
                                                f"(ETL{first:03d}-ETL{last:03d})"),
             ("braintrace", braintrace_versions(rule))]
    rows = [f"| {key} | {_cell(value)} |" for key, value in facts]
    table = "\n".join([f"| Rule | `{rule.id}` |", "| --- | --- |", *rows])
    return (f"# {rule.id} {rule.name}\n\n{rule.summary}.\n\n{table}\n\n{body.strip()}\n\n"
            f"`etrace-lint rule {rule.id}` prints this text in the terminal.\n")


def rule_page_file(rule_id: str) -> str:
    """The Markdown file of the rule's page in the site's sources: ``rules/etl208.md``."""
    return rule_page_path(rule_id).rstrip("/") + ".md"


def rules_index() -> str:
    """Every rule by family: a heading per family, a table of its rules linking to their pages."""
    parts = []
    rules = list(all_rules().values())
    for first, last, title, what in RULE_GROUPS:
        members = [rule for rule in rules if first <= int(rule.id[3:]) <= last]
        if not members:
            continue
        rows = ["| Rule | Name | Level | What it reports |", "| --- | --- | --- | --- |"]
        for rule in members:
            link = rule_page_file(rule.id).removeprefix("rules/")
            rows.append(f"| [{rule.id}]({link}) | `{rule.name}` | {rule.level.value} | "
                        f"{_cell(rule.summary)}{'' if _status(rule) == 'on by default' else f' ({_status(rule)})'} |")
        parts.append(f"### ETL{first:03d}-ETL{last:03d}\n\n**{title}**: {what}.\n\n" + "\n".join(rows) + "\n")
    return "\n".join(parts)


def rules_nav() -> list[dict[str, list[dict[str, str]]]]:
    """The rules' pages for the site's navigation, by family."""
    rules = list(all_rules().values())
    nav = []
    for first, last, title, _ in RULE_GROUPS:
        pages = [{f"{rule.id} {rule.name}": rule_page_file(rule.id)} for rule in rules
                 if first <= int(rule.id[3:]) <= last]
        if pages:
            nav.append({f"{title} (ETL{first:03d}-ETL{last:03d})": pages})
    return nav
