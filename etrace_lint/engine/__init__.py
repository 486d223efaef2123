"""One target in, located findings out: load -> trace and compile -> rules.

- :mod:`.lint`: the engine's entry points, ``lint_target`` and ``lint_model``;
- :mod:`.targets`: imports a target's file and calls its factory (the only place user code runs);
- :mod:`.braintrace_adapter` and :mod:`.jaxpr_view`: the only modules that touch braintrace's and
  JAX's private layout;
- :mod:`.rules_compiler`, :mod:`.analysis`, :mod:`.row_sums`, :mod:`.zero_gradients`,
  :mod:`.evidence`: compiler records and our own analyses -> findings, one verdict per weight;
- :mod:`.locate`, :mod:`.assignments`, :mod:`.model_paths`, :mod:`.flows`: where in the user's
  code a finding points, and the route it describes.

May import: ``core``, ``config``, ``discovery``, ``verify`` (the probe and ``--verify``, lazily),
and ``running.isolation`` (listed in pyproject.toml's import-linter contract). Never formats
text for a terminal and never decides what is shown.
"""
