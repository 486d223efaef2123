"""The exit codes of every ``etrace-lint`` command (flake8's: 0 clean, 1 findings, 2 usage or tool error)."""

EXIT_OK = 0  # no finding at or above the fail level, or --exit-zero
EXIT_FINDINGS = 1  # at least one finding at or above the fail level
EXIT_ERROR = 2  # a usage error (unknown option or rule, bad configuration) or a target that could not be linted
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT


def exit_code(tool_errors: bool, failing: bool, exit_zero: bool) -> int:
    """The one rule every command's exit code follows: a tool error is 2 whatever else, ``--exit-zero``
    turns findings into 0, and a finding at or above the fail level is 1.

    ``failing``: some finding not suppressed is at or above the fail level."""
    if tool_errors:
        return EXIT_ERROR
    if exit_zero:
        return EXIT_OK
    return EXIT_FINDINGS if failing else EXIT_OK
