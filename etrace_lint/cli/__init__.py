"""The command line: parse, run the pipeline, report, exit.

- :mod:`.main`: ``etrace-lint [check] PATHS``, its subcommands and exit codes;
- :mod:`.app`: one run as a pipeline, discover -> plan -> run -> policy -> fixes -> outputs, each
  stage a function of the previous stage's frozen result; :mod:`.plan` holds the first two stages,
  :mod:`.outputs` where the writers print;
- :mod:`.commands`, :mod:`.docs`, :mod:`.merge`, :mod:`.watch`, :mod:`.progress`: ``clean`` and
  ``--show-settings``, ``rule``/``rules``, ``merge``, ``--watch`` and the progress line.
- :mod:`.daemon`: the background process per project that serves ``etrace-lint PATHS`` with warm
  workers, and ``etrace-lint daemon status|stop``.

May import every other stage; nothing imports it but ``etrace_lint.__main__`` and the console
script.
"""
