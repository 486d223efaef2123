"""Differential testing against braintrace: generated models, braintrace's own online gradient as the oracle.

- :mod:`.generator`: a model described as data (:class:`~.generator.ModelSpec`), hypothesis strategies over it,
  and the ``.py`` file it is written to, so that every location the linter reports is real;
- :mod:`.oracle`: braintrace's public API only, in a process of its own: each weight's online gradient against
  BPTT at T=1 and T=k, named in :class:`etrace_lint.core.weight_verdict.WeightVerdict`'s words;
- :mod:`.campaign`: both answers per weight, a table of verdicts and disagreements, shards and their merge;
- ``python -m tests.fuzz``: the command line (``run``, ``merge``, ``shrink``, ``oracle``, ``lint``).

The tests' helpers (``online_referee``) are plain modules of tests/, importable as pytest imports them.
"""

from __future__ import annotations

import os
import sys

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
