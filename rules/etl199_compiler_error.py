from etrace_lint.core.findings import Level
from etrace_lint.core.rule import ErrorFacts, ErrorMatch, ErrorRule


def explain_error(facts: ErrorFacts) -> str:
    """On the line of the equation the compiler was handling, say so: the model may well be fine."""
    if not facts.on_user_line:
        return facts.text
    return (f"the compiler crashed while handling this line's `{facts.primitive}` ({facts.text}); "
            f"etrace-lint does not know this error: the model may be fine, report it to braintrace")

RULE = ErrorRule(
    id="ETL199",
    name="compiler-error",
    level=Level.ERROR,
    summary="The ETrace compiler raised an error etrace-lint does not recognise",
    tags=("compiler", "error"),
    error=ErrorMatch(types=("Exception",)),
    explain_error=explain_error,
)
