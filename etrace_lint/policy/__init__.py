"""Decide, once, which findings are shown and at what level (flake8's style guide), and so what
the engine may leave out.

- :mod:`.decide`: selection, severities, inline suppressions, the baseline and the fail level ->
  an ``Outcome`` that writers format.
- :mod:`.scope`: from the same ``PolicySettings``, once per run and before the engine runs, an
  ``EngineScope``: the opt-in rules the run turned on, and the rules whose findings nobody will see
  (notes a run hides) so the engine counts them per rule instead of locating and building them
  (``stage_settings`` asks once, while each stage's settings are built). The runner hands it to
  the engine in ``EngineSettings.scope``; the engine obeys it without knowing why, the cache keeps
  a result only for runs that count no more than it did, and :func:`.decide.apply_policy` reports
  the counts as hidden notes. A run that shows notes (``--show-info``, a level raising one,
  ``--verify``) gets a scope that counts nothing.

May import: ``core`` and ``config``.
"""
