"""The records every stage shares, and nothing else: a newcomer starts here.

- :mod:`.findings`: ``Finding``, ``ToolError``, ``Level``, ``Location`` and ``TargetResult``, the plain
  records between the engine, the policy and the writers;
- :mod:`.details`: what a finding's maker knows beside its message (a compiler record, a rule's own
  facts, a measurement), typed, that the writers print as the finding's properties;
- :mod:`.rule` and :mod:`.registry`: what a rule is (metadata as data) and the registry that loads
  ``etrace_lint.rules``;
- :mod:`.positions`, :mod:`.naming`, :mod:`.wording`: columns, the names a modeller recognises, how
  library and exception texts are shown;
- :mod:`.places`: a place as the outputs name it, ``path:line:col`` or IPython's ``Cell In[3], line 1``;
- :mod:`.sizes`: bytes as people write and read them (``"4GiB"``);
- :mod:`.exit_codes`, :mod:`.marker` (the ``@etrace_lint.target`` decorator) and
  :mod:`.learning_graph` (the weights -> ops -> hidden states picture read off the findings).

May import: the standard library and ``etrace_lint.rules`` (the registry loads it). Never JAX, never
another stage: every stage imports core, core imports none of them.
"""
