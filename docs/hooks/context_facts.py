"""The reference of what an analysis rule's check may read, written from the code when the site is built.

One line per public property and method of ``AnalysisContext`` (etrace_lint/analysis/context.py), then,
for each object those hand out that the analysis defines (a ``PlainUse``, an ``EqnSite``, ...), one line
per field and property: its name, its type and the first sentence of its docstring or the comment on its
line. Also the rules behind ``AnalysisContext.gradient_free_weights`` (:func:`gradient_free_rules`): those
whose facts make it up and those that skip its weights. It reads the source with ``ast``, so building the
site imports neither JAX nor braintrace.
"""

from __future__ import annotations

import ast
import glob
import os
import re
from dataclasses import dataclass

CONTEXT_CLASS = "AnalysisContext"
ANALYSIS = os.path.join("etrace_lint", "analysis")
GRADIENT_FREE = "gradient_free_weights"
RULE_FILE = re.compile(r"(etl\d{3})_\w+\.py$")


@dataclass(frozen=True)
class Member:
    """One fact: a property, a method (with its parameters) or a field of a record."""

    name: str
    type: str
    what: str  # the first sentence of its docstring or its comment, empty when it has none


@dataclass(frozen=True)
class Record:
    name: str
    module: str  # relative to the repository
    what: str
    members: tuple[Member, ...]


def _first_sentence(text: str) -> str:
    """Up to the first stop (``.``, ``:`` or ``;`` and a space) outside brackets that ends at least three words:
    ``empty: none`` and ``(verify={"algorithms": ...})`` are not sentences of their own."""
    text = " ".join(text.split())
    for match in re.finditer(r"[.:;](?=\s|$)", text):
        head = text[:match.start()]
        if len(head.split()) >= 3 and all(head.count(a) == head.count(b) for a, b in ("()", "[]", "{}")):
            return head + "."
    return text.rstrip(":;.") + "." if text else ""


def _is_property(node: ast.FunctionDef) -> bool:
    return any(ast.unparse(d).endswith(("property", "cached_property")) for d in node.decorator_list)


def _members(cls: ast.ClassDef, lines: list[str]) -> tuple[Member, ...]:
    found = []
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
            line = lines[node.lineno - 1]
            comment = line.split("  # ", 1)[1] if "  # " in line else ""
            found.append(Member(name, ast.unparse(node.annotation), _first_sentence(comment)))
        elif isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            kind = ""
            if not _is_property(node):
                params = [a.arg for a in node.args.args[1:]]
                kind = f"({', '.join(params)})"
            returns = ast.unparse(node.returns).strip("'\"") if node.returns else ""
            found.append(Member(node.name + kind, returns, _first_sentence(ast.get_docstring(node) or "")))
    return tuple(member for member in found if not member.name.startswith("_"))


def _classes(repo: str) -> dict[str, tuple[str, ast.ClassDef, list[str]]]:
    """Every top-level class of the analysis: name -> (module, its node, the module's lines)."""
    found = {}
    for path in sorted(glob.glob(os.path.join(repo, ANALYSIS, "**", "*.py"), recursive=True)):
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        lines = source.splitlines()
        for node in ast.parse(source).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                found.setdefault(node.name, (os.path.relpath(path, repo), node, lines))
    return found


def _names_in(annotation: str) -> list[str]:
    return [name.rsplit(".", 1)[-1] for name in re.findall(r"[A-Za-z_][\w.]*", annotation)]


def records(repo: str) -> list[Record]:
    """The context first, then every record it hands out, in the order they are first named."""
    classes = _classes(repo)
    order, seen = [CONTEXT_CLASS], {CONTEXT_CLASS}
    result = []
    while order:
        name = order.pop(0)
        module, node, lines = classes[name]
        members = _members(node, lines)
        result.append(Record(name, module, _first_sentence(ast.get_docstring(node) or ""), members))
        for member in members:
            for named in _names_in(member.type):
                if named in classes and named not in seen:
                    seen.add(named)
                    order.append(named)
    return result


def _attributes_of(node: ast.AST, owner: str) -> set[str]:
    """The attributes read off the name ``owner`` inside ``node``: ``context.rounding_cuts`` -> ``rounding_cuts``."""
    return {sub.attr for sub in ast.walk(node)
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == owner}


@dataclass(frozen=True)
class GradientFreeRules:
    """The rules behind ``AnalysisContext.gradient_free_weights``, by id."""

    facts: tuple[str, ...]  # the rules whose check reads a fact the property is the union of
    skipping: tuple[str, ...]  # the rules whose check reads the property itself, to skip its weights


def gradient_free_rules(repo: str) -> GradientFreeRules:
    """Read off the code: the facts the property's body reads (``self.rounding_cuts``), then each rule whose
    module reads one of them, or the property, off its context."""
    with open(os.path.join(repo, ANALYSIS, "context.py"), encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    context = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == CONTEXT_CLASS)
    union = next(node for node in context.body if isinstance(node, ast.FunctionDef) and node.name == GRADIENT_FREE)
    facts = _attributes_of(union, "self")
    found: dict[str, list[str]] = {"facts": [], "skipping": []}
    for path in sorted(glob.glob(os.path.join(repo, "rules", "etl*.py"))):
        match = RULE_FILE.search(os.path.basename(path))
        if match is None:
            continue
        with open(path, encoding="utf-8") as handle:
            read = _attributes_of(ast.parse(handle.read()), "context")
        if GRADIENT_FREE in read:
            found["skipping"].append(match.group(1).upper())
        elif read & facts:
            found["facts"].append(match.group(1).upper())
    return GradientFreeRules(tuple(found["facts"]), tuple(found["skipping"]))


def _listed(items: tuple[str, ...]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def gradient_free_sentence(repo: str) -> str:
    """The page's sentence of which rules make up ``gradient_free_weights`` and which skip its weights."""
    rules = gradient_free_rules(repo)
    owners = tuple(rule + "'s" for rule in rules.facts)
    return (f"that property is the union of {_listed(owners)} facts, and "
            f"{_listed(rules.skipping)}, which deny a weight an online gradient for reasons whose fixes would not "
            f"help it, skip every weight in it")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def context_reference(repo: str) -> str:
    """The reference, as Markdown tables."""
    parts = []
    for record in records(repo):
        rows = "".join(f"| `{m.name}` | `{_cell(m.type)}` | {_cell(m.what)} |\n" for m in record.members)
        parts.append(f"### {record.name}\n\n{record.what} (`{record.module}`)\n\n"
                     f"| name | type | what it holds |\n|---|---|---|\n{rows}")
    return "\n".join(parts)


if __name__ == "__main__":  # the tables of the docs page, printed in a checkout: python docs/hooks/context_facts.py
    _repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    print(context_reference(_repo))
    print(f"gradient_free_weights: {gradient_free_sentence(_repo)}")
