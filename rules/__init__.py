"""One module per rule; each defines ``RULE`` and has its documentation in a
Markdown file of the same name beside it. Installed as ``etrace_lint.rules``."""
