"""Three code-health counts may only go down (bench/code_counts.py prints them per package).

Goals: imports inside functions only where laziness is measured and commented (at most 40: a
cached run, the CLI's start, the pytest plugin and the IPython extension import nothing heavy);
no getattr/hasattr on our own types (on JAX, braintrace, brainstate, user modules they stay);
at most 60 ``Any`` in function signatures, each where a third-party type is really unknown.
Each ceiling is the count when it was last lowered: lower it when a change lowers the count.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LOCAL_IMPORTS = 29  # 101 before the worker's, the capture's and the fixes' imports moved to modules of their own
# 161 before; those left read JAX, braintrace, brainstate, IPython, user modules or the standard library (129: the
# 4 added read IPython's compiler and its file runner, brainstate's check function and a JAX value's dtype)
GETATTR_CALLS = 129
ANY_IN_SIGNATURES = 6  # 682 before the jaxprs, JSON, braintrace's learners and NumPy values were named


def _code_counts():
    spec = importlib.util.spec_from_file_location("code_counts", ROOT / "bench" / "code_counts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("code_counts", module)  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_the_counts_only_go_down():
    totals = _code_counts().totals(ROOT)
    assert totals.local_imports <= LOCAL_IMPORTS, "a new import inside a function: move it to the top"
    assert totals.getattr_calls <= GETATTR_CALLS, "a new getattr/hasattr: read the attribute of a known type"
    assert totals.any_in_signatures <= ANY_IN_SIGNATURES, "a new Any in a signature: name the type"


def test_each_count_is_counted():
    counts = _code_counts().count_source(
        "from typing import Any\n"
        "import os\n"
        "def f(x: Any, *rest: 'Any') -> dict[str, Any]:\n"
        "    import json\n"
        "    def g():\n"
        "        from os import path\n"
        "    return getattr(x, 'y', None) or hasattr(x, 'z')\n"
    )
    assert (counts.local_imports, counts.getattr_calls, counts.any_in_signatures) == (2, 2, 3)
