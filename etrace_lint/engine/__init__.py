"""One target in, located findings out: load -> trace and compile -> rules.

- :mod:`.lint`: the engine's entry points, ``lint_target`` and ``lint_model``;
- :mod:`.targets`: imports a target's file and calls its factory (the only place user code runs);
- :mod:`.rules_compiler`, :mod:`.evidence`: compiler records and our own analyses -> findings,
  one verdict per weight; :mod:`.subjects`: the weights and states a compiler record or exception names,
  by what each is; :mod:`.model_paths`: the shortest way to name a weight;
- :mod:`.fresh_state`: each target from the same settings and random state, and what it changed undone.

What the engine reads a model with (braintrace's graph, the jaxpr, locations in the user's code)
is :mod:`etrace_lint.analysis`, which rules and ``verify`` read too.

May import: ``core``, ``config``, ``discovery``, ``analysis``, ``verify`` (the probe, ``--verify`` and the advisor),
and ``running.isolation``'s search path (listed in pyproject.toml's import-linter contract). Never formats
text for a terminal and never decides what is shown.
"""
