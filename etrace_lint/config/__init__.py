"""What a run is asked to do: every option declared once, and the settings resolved from them.

- :mod:`.options`: the table of options (flag, ``[tool.etrace-lint]`` key, type, default, help);
- :mod:`.settings`: the resolved ``Settings`` and each stage's own view of it, built once
  (``Settings.stages``): ``DiscoverySettings``, ``RunSettings``, the engine's ``EngineSettings``,
  ``PolicySettings``, ``OutputSettings``;
- :mod:`.pyproject`: ``[tool.etrace-lint]`` read, checked and layered over the defaults;
- :mod:`.suppressions` and :mod:`.baseline`: what a user said not to show;
- :mod:`.environ`: the ``brainstate.environ`` values a target is built under.

May import: ``core``. Two known exceptions are listed in pyproject.toml's import-linter
contract (the output formats' names and ``--memory-limit``'s size parser). Never JAX.
"""
