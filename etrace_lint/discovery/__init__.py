"""Files and ``path::factory`` arguments -> lint targets, without importing anything.

- :mod:`.discover`: walks paths, honours excludes and ``.gitignore``, and finds target factories
  by reading the source, never by importing it;
- :mod:`.stdin_buffer`: ``etrace-lint -``, a buffer piped in by an editor.

May import: ``core`` and ``config``. Never JAX and never user code.
"""
