"""ETL201's fixes: a weight used through a plain matmul, or a plain layer, becomes an ETP op.

- ``x @ W``, ``jnp.dot(x, W)``, ``jnp.matmul(x, W)`` (``W`` may be
  ``self.w.value``) -> ``braintrace.matmul(x, W)``: the same operands, the same
  forward value, so the fix is safe.
- A weight that reaches the op through a transpose (``x @ W.T``, or a weight on
  the left, ``W @ h`` -> ``braintrace.matmul(h, W.T)``): the same numbers
  forward, but braintrace's ETP op then sees the weight through the transpose
  and computes its online gradient in the transposed layout: the learning-signal
  probe measured the first training step of a non-square weight raise (ETL410).
  The fix is unsafe (``--unsafe-fixes``, checked by linting again as every fix
  is); storing the weight in the layout the op takes is the real fix.
- ``brainstate.nn.Linear(...)`` -> ``braintrace.nn.Linear(...)`` when every
  argument is one braintrace's layer takes (the two share their signature
  and initialisers).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..core.findings import Finding, Fix
from ..core.rule import SourceTexts
from .files import parsed

if TYPE_CHECKING:  # libcst loads with the first file a fix parses (see .files); annotations only
    import libcst as cst

    from .source import ParsedSource

_MATMUL_FUNCTIONS = frozenset({"jnp.dot", "jnp.matmul", "jax.numpy.dot", "jax.numpy.matmul", "numpy.dot",
                               "numpy.matmul", "np.dot", "np.matmul"})
# brainstate.nn.Linear's parameters, all taken by braintrace.nn.Linear with the same defaults
_LINEAR_PARAMETERS = {"in_size", "out_size", "w_init", "b_init", "w_mask", "name", "param_type"}
# parts of a state path that name a container, not the weight
_GENERIC_NAMES = {"value", "weight", "weights", "kernel", "self"}


def weight_names(display: str) -> set[str]:
    """Identifiers a use of the weight ``display`` (``cell.Wr.weight``, ``w_rec``) mentions in code."""
    names = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", display)
    specific = [n for n in names if n not in _GENERIC_NAMES]
    # the attribute holding the state, and the module holding it: self.Wr.weight.value
    return set(specific[-1:]) or set(names[-1:])


def _mentions(source: ParsedSource, node: cst.CSTNode, names: set[str]) -> bool:
    return bool(names & set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source.code(node))))


def matmul_fix(finding: Finding, sources: SourceTexts) -> Fix | None:
    """``x @ W`` on the finding's line -> ``braintrace.matmul(x, W)``."""
    if finding.subject.primitive != "dot_general" or finding.subject.etp_layer:
        return None
    source = parsed(sources, finding.location.path)
    if source is None:
        return None
    names = weight_names(finding.subject.weight)
    candidates = [(node, ops) for node in source.nodes_starting_on(finding.location.line)
                  if (ops := source.matmul_operands(node, _MATMUL_FUNCTIONS)) is not None]
    exact = [c for c in candidates if source.start(c[0]) == (finding.location.line, finding.location.column)]
    # the op the compiler placed the finding on; else the one matmul of this weight on the line
    chosen = exact or [c for c in candidates if _mentions(source, c[1][1], names)]
    if len(chosen) != 1:
        return None
    node, (left, right) = chosen[0]
    on_right, on_left = _mentions(source, right, names), _mentions(source, left, names)
    if on_right == on_left:
        return None  # the weight on both sides, or on neither: not a plain x @ W
    module = source.braintrace_alias()
    if on_right:
        arguments = f"{source.code(left)}, {source.code(right)}"
        applicability = "unsafe" if source.transposed_of(right) is not None else "safe"
    else:
        arguments, applicability = f"{source.code(right)}, {source.transposed(left)}", "unsafe"
    replacement = f"{module or 'braintrace'}.matmul({arguments})"
    edits = [source.replace(node, replacement)]
    if module is None:
        edits.append(source.import_braintrace())
    return Fix(f"use braintrace.matmul({arguments})", tuple(edits), applicability)


def linear_fix(finding: Finding, sources: SourceTexts) -> Fix | None:
    """The weight's ``brainstate.nn.Linear(...)`` -> ``braintrace.nn.Linear(...)``."""
    if finding.subject.etp_layer != "braintrace.nn.Linear":
        return None
    created = next((loc for loc in finding.related if loc.label == "weight created here"), None)
    if created is None:
        return None
    source = parsed(sources, created.path)
    if source is None:
        return None
    calls = source.calls_starting_on(created.line, "brainstate.nn.Linear")
    if len(calls) != 1:
        return None
    call = calls[0]
    if any(a.star for a in call.args) or len(call.args) > len(_LINEAR_PARAMETERS):
        return None
    if any(a.keyword is not None and a.keyword.value not in _LINEAR_PARAMETERS for a in call.args):
        return None
    module = source.braintrace_alias()
    edits = [source.replace(call.func, f"{module or 'braintrace'}.nn.Linear")]
    if module is None:
        edits.append(source.import_braintrace())
    return Fix(f"make this layer a braintrace.nn.Linear (line {created.line})", tuple(edits), "safe")


def etp_fix(finding: Finding, sources: SourceTexts) -> Fix | None:
    """ETL201's fix: whichever of the two applies."""
    return linear_fix(finding, sources) or matmul_fix(finding, sources)
