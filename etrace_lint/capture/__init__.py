"""Lint the models a program really compiles: capture each online-learning compile at braintrace's
public entry points (``braintrace.compile`` and ``ETraceAlgorithm.compile_graph``), lint it as a
target, and put back everything the lint touched.

Used by ``etrace-lint run SCRIPT`` (:mod:`.program`, in the program's own process), the pytest plugin
and the IPython extension. Nothing here imports JAX, brainstate or braintrace before the program
does: braintrace is patched when the program imports it (:mod:`.hooks`), so the environment
variables and JAX settings a script sets before its imports take effect as without etrace-lint.

May import the engine, analysis, running's isolation helpers, config and core; never the writers or
the CLI.
"""
