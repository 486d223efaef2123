"""The command line: parse, run the pipeline, report, exit.

- :mod:`.main`: ``etrace-lint [check] PATHS``, its subcommands and exit codes;
- :mod:`.app`: one run, discover -> run -> policy -> fixes -> writers;
- :mod:`.commands`, :mod:`.docs`, :mod:`.merge`, :mod:`.watch`, :mod:`.progress`: ``clean`` and
  ``--show-settings``, ``rule``/``rules``, ``merge``, ``--watch`` and the progress line.

May import every other stage; nothing imports it but ``etrace_lint.__main__`` and the console
script.
"""
