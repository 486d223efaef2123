"""A warm background process per project and user that serves ``etrace-lint PATHS`` (as dmypy and
eslint_d do): its workers keep JAX, brainstate and braintrace imported between runs, so a pre-commit
run of one edited model does not pay for those imports again.

- :mod:`.place`: where the sockets live (a folder only the user can open) and the checks of its
  folder, its socket files and the process at the other end;
- :mod:`.key`: the digest of everything a run's answer depends on besides its command line, in the
  socket's name, so that a changed configuration, environment or installation starts a fresh process;
- :mod:`.wire`: length-prefixed JSON messages over the socket;
- :mod:`.client`: whether a run goes to the daemon, starting one, and falling back to a direct run;
- :mod:`.serve`: the daemon itself, which runs the same command line in-process over warm workers;
- :mod:`.command`: ``etrace-lint daemon status|stop``.

Part of the command line: it may import every stage.
"""
