"""The exit codes of every ``etrace-lint`` command (flake8's: 0 clean, 1 findings, 2 usage or tool error)."""

EXIT_OK = 0  # no finding at or above the fail level, or --exit-zero
EXIT_FINDINGS = 1  # at least one finding at or above the fail level
EXIT_ERROR = 2  # a usage error (unknown option or rule, bad configuration) or a target that could not be linted
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT
