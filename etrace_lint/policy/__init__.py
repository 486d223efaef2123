"""Decide, once, which findings are shown and at what level (flake8's style guide).

- :mod:`.decide`: selection, severities, inline suppressions, the baseline and the fail level ->
  an ``Outcome`` that writers format.

May import: ``core`` and ``config``.
"""
