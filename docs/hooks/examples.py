"""A model that triggers each rule, cut from the test suite's fixtures for the rule's page.

A fixture line that a rule must report carries ``# expect: ETL208``, and the suite checks that the
rule is reported there. For a rule's page, :func:`example_model` takes such a line, the target factory
whose code reaches it, and only what that factory needs from its file (imports, the top-level
statements that run on import, the classes and functions it uses, transitively): one self-contained
model, the shortest any fixture gives, with the rule's line marked ``# ETL208``. A model says what a lint
needs for the rule to run: the rule's flag (``--verify``, ``--advise``, ``--check-online-grad``), the
``[tool.etrace-lint]`` settings of :data:`SETTINGS`, and for a rule only one braintrace line reports
(:data:`ONE_LINE`, marked ``# expect: ETL209?`` in the fixtures), that line. The rules of :data:`NO_MODEL`
have none, and their pages say why.

``tests/test_docs_site.py`` lints every model this gives, as a file of its own, with what it needs, and
checks that its rule is reported on the marked line: a page's model cannot stop triggering its rule
unnoticed.
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
# the factory to show where the shortest model is not the one: ETL103's factories share its line but only
# one triggers it (its compile options make the compiler refuse what the others accept); ETL209's shortest
# model has no hidden state at all, where the rule is about a recurrent model's readout
FACTORY = {"ETL103": "etrace_target_hidden_in_while_refused", "ETL209": "initialised_in_the_factory"}

# what a rule needs besides its flag, as the pyproject.toml beside the model says it: the advice's findings
# are about the algorithm the target configures, measured against the algorithms listed (each one listed
# is built and run: a few are quicker than every installed one), at the training batch and memory budget
SETTINGS = {
    "ETL302": '[tool.etrace-lint.advise]\nalgorithms = ["dni", "d_rtrl"]\n',
    "ETL303": ('[tool.etrace-lint.advise]\nalgorithms = ["d_rtrl", "pp_prop:multi-step"]\nbatch-size = 4096\n'
               'memory-budget = "128KiB"\n'),
    "ETL304": '[tool.etrace-lint.advise]\nalgorithms = ["d_rtrl", "pp_prop:multi-step"]\n',
}

# rules one braintrace line reports and the other does not, by the model's design: (the first braintrace
# that reports it, the first that no longer does, or None). Their fixture lines are marked ``ETL209?``
ONE_LINE = {
    "ETL209": ("0.2.6", "0.2.8"),  # 0.2.8 adds a readout's same-step gradient
    "ETL211": ("0.2.8", None),  # 0.2.6 adds none, and ETL209 reports the weight
}

# rules no model triggers, and why: what the page says instead of a model
NO_MODEL = {
    "ETL418": "No finding of its own shows it: its measurement is folded into the finding of the rule that says a "
              "use of the weight gets no online gradient (ETL201, ETL005, ...), whose message then says that the "
              "weight learns partly. `tests/fixtures/probe/partly.py` shows it on braintrace 0.2.8, where a plain "
              "input weight that also reaches the output gets its same-step gradient.",
    "ETL421": "No finding of its own shows it: its measurement is folded into the finding of the rule that says a "
              "use of the weight gets no online gradient (ETL005, ...), which then becomes a note that says the weight "
              "learns online as BPTT does. `tests/fixtures/probe/exact_despite_exclusion.py` shows it on braintrace "
              "0.2.8, where a weight braintrace excludes feeds no state and gets its whole gradient in the same step.",
    "ETL021": "No model triggers it with braintrace 0.2.6 or 0.2.8: their compiler inlines every `jax.jit` call "
              "(at the top level and inside `scan`, `while` and `cond` bodies) before the relation pass that records "
              "it, so that pass never meets a jit call. It comes from a compiler pass run on a raw jaxpr, or from a "
              "braintrace release that stops inlining some calls.",
    "ETL024": "No model triggers it with braintrace 0.2.6 or 0.2.8: the compiler records it when its backward walk "
              "from an ETP op's weight misses every leaf of the `ParamState` that an identical walk has just found, "
              "and both walks follow the same equations. It is the compiler's safeguard; a braintrace release that "
              "finds a weight's leaf another way may record it.",
    "ETL027": "No model triggers it: braintrace 0.2.6 and 0.2.8 declare the record kind `transition_tail_bounded` "
              "but record it nowhere. A braintrace release that records where it bounds the transition produces it.",
    "ETL099": "No model triggers it with this etrace-lint: every record kind that braintrace 0.2.6 and 0.2.8 make "
              "has a rule of its own. A braintrace release newer than this etrace-lint, with a kind of record it "
              "does not know yet, produces it.",
    "ETL105": "No model triggers it with braintrace 0.2.6 or 0.2.8: both record the refusal (`weight_in_while`, "
              "`weight_in_control_flow`) before they raise it, and the finding is then reported once, under "
              "[ETL016](etl016.md) for a `while` loop or [ETL030](etl030.md) for a `scan` or `cond`, whose pages "
              "show a model. A braintrace that raises the error without recording it produces ETL105.",
    "ETL109": "No model triggers it with braintrace 0.2.6 or 0.2.8: the compiler keeps hidden states of different "
              "shapes apart before it builds the groups, so the check that raises this error is a second line of "
              "defence. Seeing it means the grouping itself went wrong: report the model to braintrace.",
    "ETL199": "No model triggers it on purpose: it is what a crash of braintrace's compiler that no other rule "
              "recognises becomes, and each such crash is a bug of braintrace (report it with the model). A model "
              "that makes the compiler raise an error it means to raise gets that error's own rule.",
}


@dataclass(frozen=True)
class ExampleModel:
    rule_id: str
    source: str  # a module of its own: imports, what the factory uses, the factory
    factory: str
    fixture: str  # where it was cut from, relative to the repository
    line: int  # the factory's line there
    flags: tuple[str, ...] = ()  # what the command line needs for the rule to run: ("--verify",)
    settings: str = ""  # the pyproject.toml beside the model (SETTINGS), or nothing
    braintrace: tuple[str, str | None] | None = None  # ONE_LINE's versions: the model triggers it there only


def _markers(line: str, rule_id: str) -> set[str]:
    """The rules a fixture line must report; ``ETL017?`` marks one a braintrace line may omit, which
    counts for a rule only one braintrace line reports (:data:`ONE_LINE`)."""
    match = MARKER.search(line)
    if not match:
        return set()
    rules = {rule.strip() for rule in match.group(1).split(",") if rule.strip()}
    optional = {rule_id} & set(ONE_LINE) if f"{rule_id}?" in rules else set()
    return {rule for rule in rules if not rule.endswith("?")} | optional


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
            marked_here = _markers(line, rule_id)
            line = MARKER.sub("", line.rstrip("\n")) if MARKER.search(line) else line.rstrip("\n")
            if rule_id in marked_here:
                line += f"  # {rule_id}"
                marked = True
            out.append(line)
    return "\n".join(out).strip("\n") + "\n", marked


@functools.lru_cache(maxsize=None)
def _fixture(path: str) -> tuple[str, set[str], ast.Module | None, tuple]:
    """A fixture's text, the rules it marks (``ETL017?`` as ETL017), its syntax tree and its targets (each file
    read once)."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    marked = {rule.strip().rstrip("?") for match in map(MARKER.search, text.splitlines()) if match
              for rule in match.group(1).split(",") if rule.strip()}
    if not marked:
        return text, marked, None, ()
    return text, marked, ast.parse(text), tuple(targets_in_source(path, text.encode()))


def _candidates(path: str, rule, root: str):
    text, marked, tree, specs = _fixture(path)
    if rule.id not in marked:
        return
    lines = text.splitlines(keepends=True)
    # the rule's flag, unless it is on by default (the probe's rules)
    flags = (rule.opt_in_flag,) if rule.opt_in_flag and not runs_by_default(rule) else ()
    for spec in specs:
        if FACTORY.get(rule.id, spec.factory) != spec.factory:
            continue
        source, marked = _cut(lines, _closure(tree, spec.factory), rule.id)
        if marked:
            yield ExampleModel(rule.id, source, spec.factory, os.path.relpath(path, root).replace(os.sep, "/"),
                               spec.line, flags, SETTINGS.get(rule.id, ""), ONE_LINE.get(rule.id))


def fixture_files(root: str) -> list[str]:
    return sorted(glob.glob(os.path.join(root, "tests", "fixtures", "**", "*.py"), recursive=True))


def example_model(rule, root: str, files: list[str] | None = None) -> ExampleModel | None:
    """The shortest model the fixtures under ``root`` give for ``rule``, or None (a retired rule, a rule of
    :data:`NO_MODEL`, or one no fixture marks); of models as short, the first in the fixtures (a fixture
    states its problem before the variants that avoid it)."""
    if rule.retired or rule.id in NO_MODEL:
        return None
    found = [c for path in (files or fixture_files(root)) for c in _candidates(path, rule, root)]
    return min(found, key=lambda c: (c.source.count("\n"), c.fixture, c.line), default=None)
