"""A model that triggers each rule, cut from the test suite's fixtures for the rule's page.

A fixture line that a rule must report carries ``# expect: ETL208``, and the suite checks that the
rule is reported there. For a rule's page, :func:`example_model` takes such a line, the target factory
whose code reaches it, and only what that factory needs from its file (imports, the top-level
statements that run on import, the classes and functions it uses, transitively): one self-contained
model, the shortest any fixture gives, with the rule's line marked ``# ETL208``. Rules run only with a
flag (``--verify``, ...) get none: their pages say which flag. The probe's rules run by default and get one.

``tests/test_docs_site.py`` lints every model this gives, as a file of its own, and checks that its
rule is reported on the marked line: a page's model cannot stop triggering its rule unnoticed.
"""

from __future__ import annotations

import ast
import functools
import glob
import os
import re
from dataclasses import dataclass

from etrace_lint.cli.docs import runs_by_default
from etrace_lint.discovery.discover import targets_in_source

MARKER = re.compile(r"\s*#\s*expect:\s*([A-Z0-9?, ]+)\s*$")
# where the factories of one fixture share a rule's line but only one triggers the rule (its compile
# options make the compiler refuse what the others accept), the one to show
FACTORY = {"ETL103": "etrace_target_hidden_in_while_refused"}


@dataclass(frozen=True)
class ExampleModel:
    rule_id: str
    source: str  # a module of its own: imports, what the factory uses, the factory
    factory: str
    fixture: str  # where it was cut from, relative to the repository
    line: int  # the factory's line there


def _firm_markers(line: str) -> set[str]:
    """The rules a fixture line must report (``ETL017?`` marks one a braintrace line may omit)."""
    match = MARKER.search(line)
    if not match:
        return set()
    return {rule.strip() for rule in match.group(1).split(",") if rule.strip() and not rule.strip().endswith("?")}


def _names_used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _defined(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        # ``x = ...`` and ``x, y = ...`` define; ``x.attr = ...`` changes what another statement defined
        names = [e for t in targets for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])]
        return {n.id for n in names if isinstance(n, ast.Name)}
    return set()


def _closure(tree: ast.Module, factory: str) -> list[ast.stmt]:
    """The top-level statements a factory needs, in file order: every import and every statement that
    defines nothing (``jax.config.update(...)``), and the definitions it uses, transitively."""
    definitions = {name: node for node in tree.body for name in _defined(node)}
    # what runs on import (``jax.config.update(...)``, ``straight_through.defvjp(...)``) needs its names too
    on_import = [node for node in tree.body
                 if not _defined(node) and not isinstance(node, (ast.Import, ast.ImportFrom))]
    wanted, todo = set(), [definitions[factory], *on_import]
    while todo:
        node = todo.pop()
        if id(node) in wanted:
            continue
        wanted.add(id(node))
        todo += [definitions[name] for name in _names_used(node) if name in definitions]
    kept = []
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):  # the fixture's docstring
            continue
        if id(node) in wanted or isinstance(node, (ast.Import, ast.ImportFrom)) or not _defined(node):
            kept.append(node)
    return kept


def _cut(lines: list[str], nodes: list[ast.stmt], rule_id: str) -> tuple[str, bool]:
    """The statements' lines (decorators included), markers of ``rule_id`` kept as ``# ETL208``, the others
    dropped; and whether the rule's line is among them."""
    out, marked = [], False
    for index, node in enumerate(nodes):
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if index and (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                      or not isinstance(nodes[index - 1], (ast.Import, ast.ImportFrom))):
            out += ["", ""] if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else [""]
        for line in lines[first - 1:node.end_lineno]:
            firm = _firm_markers(line)
            line = MARKER.sub("", line.rstrip("\n")) if MARKER.search(line) else line.rstrip("\n")
            if rule_id in firm:
                line += f"  # {rule_id}"
                marked = True
            out.append(line)
    return "\n".join(out).strip("\n") + "\n", marked


@functools.lru_cache(maxsize=None)
def _fixture(path: str) -> tuple[str, set[str], ast.Module | None, tuple]:
    """A fixture's text, the rules it marks firmly, its syntax tree and its targets (each file read once)."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    marked = set().union(*map(_firm_markers, text.splitlines()))
    if not marked:
        return text, marked, None, ()
    return text, marked, ast.parse(text), tuple(targets_in_source(path, text.encode()))


def _candidates(path: str, rule_id: str, root: str):
    text, marked, tree, specs = _fixture(path)
    if rule_id not in marked:
        return
    lines = text.splitlines(keepends=True)
    for spec in specs:
        if FACTORY.get(rule_id, spec.factory) != spec.factory:
            continue
        source, marked = _cut(lines, _closure(tree, spec.factory), rule_id)
        if marked:
            yield ExampleModel(rule_id, source, spec.factory, os.path.relpath(path, root).replace(os.sep, "/"),
                               spec.line)


def fixture_files(root: str) -> list[str]:
    return sorted(glob.glob(os.path.join(root, "tests", "fixtures", "**", "*.py"), recursive=True))


def example_model(rule, root: str, files: list[str] | None = None) -> ExampleModel | None:
    """The shortest model the fixtures under ``root`` give for ``rule``, or None; of models as short, the
    first in the fixtures (a fixture states its problem before the variants that avoid it)."""
    if (rule.opt_in_flag and not runs_by_default(rule)) or rule.retired:
        return None
    found = [c for path in (files or fixture_files(root)) for c in _candidates(path, rule.id, root)]
    return min(found, key=lambda c: (c.source.count("\n"), c.fixture, c.line), default=None)
