"""The learning-rule advisor: for one model, every braintrace algorithm measured before training.

For each algorithm it says whether ``braintrace.compile`` accepts it and the
learner's first jitted online step runs, how many bytes of state it allocates
beyond the model's own (and the law of those bytes in the batch size), XLA's
temporary memory and flops of one online step, and per weight how close its
online gradient comes to exact BPTT. ``recommend`` then picks one.

It imports braintrace and JAX; the engine calls it in a worker, like ``--verify``.
"""

from __future__ import annotations

from ...core.advice import AdviceRow, advice_json
from .run import advise_model

__all__ = ["AdviceRow", "advice_json", "advise_model"]
