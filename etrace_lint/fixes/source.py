"""One file's concrete syntax tree (libcst) with positions, and the questions the fixes ask of it.

Only :mod:`.files` loads this module, when a fix first reads a file's syntax: libcst takes
about 0.2 s to import, and a run without fixes to offer never needs it.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from ..core.findings import Edit
from .import_placement import import_edit


class ParsedSource:
    """A file's text, its libcst module, and where each node starts and ends."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
        self.module: cst.Module = wrapper.module
        self.positions: Mapping[cst.CSTNode, CodeRange] = wrapper.resolve(PositionProvider)
        self._by_line: dict[int, list[cst.CSTNode]] = {}
        for node, where in self.positions.items():
            self._by_line.setdefault(where.start.line, []).append(node)
        self._aliases = self._import_aliases()

    def nodes_starting_on(self, line: int) -> list[cst.CSTNode]:
        return self._by_line.get(line, [])

    def start(self, node: cst.CSTNode) -> tuple[int, int]:
        where = self.positions[node].start
        return where.line, where.column + 1

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def replace(self, node: cst.CSTNode, text: str) -> Edit:
        where = self.positions[node]
        return Edit(self.path, where.start.line, where.start.column + 1, where.end.line, where.end.column + 1, text)

    def dotted(self, node: cst.CSTNode) -> str:
        """``jnp.dot`` for a chain of names and attributes, else ``""``."""
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            head = self.dotted(node.value)
            return f"{head}.{node.attr.value}" if head else ""
        return ""

    def _import_aliases(self) -> dict[str, str]:
        """Local name -> what it is bound to (``bst`` -> ``brainstate``, ``Linear`` -> ``brainstate.nn.Linear``)."""
        aliases: dict[str, str] = {}
        for node in self.positions:
            if isinstance(node, cst.Import):
                for alias in node.names:
                    full = self.dotted(alias.name)
                    local = self.dotted(alias.asname.name) if alias.asname else full.split(".")[0]
                    aliases[local] = full if alias.asname else local
            elif isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative \
                    and not isinstance(node.names, cst.ImportStar):
                module = self.dotted(node.module)
                for alias in node.names:
                    name = self.dotted(alias.name)
                    local = self.dotted(alias.asname.name) if alias.asname else name
                    aliases[local] = f"{module}.{name}"
        return aliases

    def resolve(self, dotted: str) -> str:
        """``bst.nn.Linear`` -> ``brainstate.nn.Linear`` through the file's imports."""
        head, _, rest = dotted.partition(".")
        bound = self._aliases.get(head)
        if bound is None:
            return dotted
        return f"{bound}.{rest}" if rest else bound

    def braintrace_alias(self) -> str | None:
        """The name this file binds braintrace to, or None when it does not import it."""
        return next((local for local, full in sorted(self._aliases.items()) if full == "braintrace"), None)

    def import_braintrace(self) -> Edit:
        return import_edit(self.path, self.module, self.positions)

    # -- what the ETP fix asks (fixes/etp.py) ----------------------------------------------------

    def matmul_operands(self, node: cst.CSTNode,
                        functions: frozenset[str]) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
        """(left, right) of ``a @ b``, or of a call of one of ``functions`` with two positional
        arguments (``jnp.dot(a, b)``); else None."""
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply):
            return node.left, node.right
        if isinstance(node, cst.Call) and self.dotted(node.func) in functions:
            args = node.args
            if len(args) == 2 and all(a.keyword is None and not a.star for a in args):
                return args[0].value, args[1].value
        return None

    def transposed_of(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """``W`` when the operand is written ``W.T``; else None."""
        return node.value if isinstance(node, cst.Attribute) and node.attr.value == "T" else None

    def transposed(self, node: cst.BaseExpression) -> str:
        """``W`` -> ``W.T``; ``W.T`` -> ``W``; anything but a name, attribute, subscript or call in parentheses."""
        inner = self.transposed_of(node)
        if inner is not None:
            return self.code(inner)
        code = self.code(node)
        return f"{code}.T" if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)) else f"({code}).T"

    def calls_starting_on(self, line: int, dotted: str) -> list[cst.Call]:
        """The calls of ``dotted`` (through the file's imports: ``bst.nn.Linear`` is
        ``brainstate.nn.Linear``) that start on ``line``."""
        return [node for node in self.nodes_starting_on(line)
                if isinstance(node, cst.Call) and self.resolve(self.dotted(node.func)) == dotted]
