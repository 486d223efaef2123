"""Lint what a test session or a notebook compiles: the pytest plugin's active side
(:mod:`.pytest_session`, switched on by :mod:`etrace_lint.pytest_plugin`) and the IPython extension
(:mod:`.notebook`, loaded by ``%load_ext etrace_lint``).

Both hand braintrace's compiles to :class:`.collect.CompileLinter`, which lints each distinct model
once with the capture core (:mod:`etrace_lint.capture`) and keeps every result with the test or cell
that compiled it; the policy decides what is shown and the writers print it, as for a run of the CLI.

May import capture, fixes, writers, policy, config and core; never the CLI or the server.
"""
