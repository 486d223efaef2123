"""A traced and compiled model, read: what the rules, ``--verify`` and the advisor look at.

- :mod:`.braintrace_adapter` and :mod:`.jaxpr_view`: the only modules that touch braintrace's and
  JAX's private layout (the compiled graph, its records, a step's jaxpr);
- :mod:`.context`: ``AnalysisContext``, one model's jaxpr, graph and records as rules see them;
  :mod:`.step_flow` (the step's var-level data flow), :mod:`.record_kinds`, :mod:`.flows`,
  :mod:`.zero_gradients`, :mod:`.carried_states`, :mod:`.row_sums`: the facts read from them, which
  the context hands to the rules as its properties;
- :mod:`.locate` and :mod:`.assignments`: where in the user's code a weight, an op or a state is;
- :mod:`.loaded_target`: the model a target's factory built.

May import: ``core``, ``config`` and ``discovery``. Runs no user code and decides nothing: the
engine (``engine``) turns what is read here into findings.
"""
