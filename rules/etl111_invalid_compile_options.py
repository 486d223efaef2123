from etrace_lint.core.findings import Level
from etrace_lint.core.rule import ErrorMatch, ErrorRule

RULE = ErrorRule(
    id="ETL111",
    name="invalid-compile-options",
    level=Level.ERROR,
    summary="The target's compile options are not valid for the installed braintrace",
    tags=("compiler", "error"),
    # braintrace raises NotSupportedError for a pair of options that do not go together
    # (sparse_n without include_recurrent_mixing), TypeError/ValueError for an unknown or ill-typed one
    error=ErrorMatch(types=("TypeError", "ValueError", "NotSupportedError"),
                     pattern=r"compile_etrace_graph\(\) got an unexpected keyword|ControlFlowPolicy\.|"
                             r"policy\.[a-z_]+ must be|sparse_n"),
)
