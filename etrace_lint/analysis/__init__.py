"""A traced and compiled model, read: what the rules, ``--verify`` and the advisor look at.

- :mod:`.braintrace_adapter` and :mod:`.jaxpr_view`: the only modules that touch braintrace's and
  JAX's private layout (the compiled graph, its records, a step's jaxpr);
- :mod:`.context`: ``AnalysisContext``, one model's jaxpr, graph and records as rules see them;
- :mod:`.step_flow`: the step's var-level data flow, which the other facts follow, and the walk that asks
  whose gradient reaches the loss past the values with a zero derivative (``GradientWalk``: the weights
  every path of which crosses one), with what the facts about such values share in :mod:`.gradient_cuts`;
- one module per kind of fact read from them, named for what it holds (:mod:`.zero_gradients`,
  :mod:`.weight_dtypes`, :mod:`.softmaxes`, ...), which the context hands to the rules as its properties:
  each says what it holds in its own docstring, and a new one needs no line here;
- :mod:`.locate` and :mod:`.assignments`: where in the user's code a weight, an op or a state is;
  :mod:`.flows` and :mod:`.routes`: the route through it that a finding shows;
- :mod:`.loaded_target`: the model a target's factory built.

May import: ``core``, ``config`` and ``discovery``. Runs no user code and decides nothing: the
engine (``engine``) turns what is read here into findings.
"""
