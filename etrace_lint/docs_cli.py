"""``etrace-lint rule ETL005`` and ``etrace-lint rules``: rule docs in the terminal."""

from __future__ import annotations

import sys


def main_rule(argv: list[str]) -> int:
    from .registry import all_rules

    if len(argv) != 1:
        print("usage: etrace-lint rule RULE_ID", file=sys.stderr)
        return 2
    wanted = argv[0].strip()
    rules = all_rules()
    rule = rules.get(wanted.upper()) or next((r for r in rules.values() if r.name == wanted), None)
    if rule is None:
        import difflib
        close = difflib.get_close_matches(wanted.upper(), list(rules), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        print(f"etrace-lint: error: unknown rule {wanted!r}{hint}", file=sys.stderr)
        return 2
    header = f"{rule.id} {rule.name} ({rule.level.value}{', retired' if rule.retired else ''})"
    sys.stdout.write(f"{header}\n\n{rule.summary}.\n\n")
    body = rule.docs.split("\n", 1)[1] if rule.docs.startswith("# ") else rule.docs
    sys.stdout.write(body.strip() + "\n")
    if rule.opt_in_flag:
        sys.stdout.write(f"\nThis rule runs only with {rule.opt_in_flag}.\n")
    return 0


def main_rules(argv: list[str]) -> int:
    from .registry import all_rules

    for rule in all_rules().values():
        status = " (retired)" if rule.retired else ""
        sys.stdout.write(f"{rule.id}  {rule.level.value:<7}  {rule.name}{status}: {rule.summary}\n")
    return 0
