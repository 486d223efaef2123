"""Running the engine over many targets: cache first, then isolated worker processes.

- :mod:`.runner`: cached results first, the rest on workers;
- :mod:`.workers`, :mod:`.worker_start`, :mod:`.worker_loop`, :mod:`.zygote`: the worker pool, how a
  worker starts, what runs inside it (importing JAX), and the fork server that imports JAX once;
- :mod:`.isolation`, :mod:`.children`, :mod:`.process_state`, :mod:`.memory`: what keeps one
  target's result independent of the others (state, child processes, memory);
- :mod:`.cache`, :mod:`.cache_key`, :mod:`.reads`: results on disk, keyed on what a target read;
- :mod:`.schedule` and :mod:`.shards`: which file runs next, and ``--shard K/N``.

May import: ``core``, ``config``, ``discovery``, ``policy`` and (inside a worker only) ``engine``.
The parent process never imports JAX: a run served from the cache stays light.
"""
