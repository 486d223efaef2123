from etrace_lint.findings import Level
from etrace_lint.rule import Hit, Rule


def check(context):
    if not context.learning_weights:
        return
    from etrace_lint.braintrace_adapter import online_gradient_failure

    failure = online_gradient_failure(context.model, context.inputs)
    if failure is not None:
        yield Hit(message=f"the model compiles but one online gradient step cannot be built: {failure}",
                  properties={"algorithm": "d_rtrl"})


RULE = Rule(
    id="ETL205",
    name="not-online-differentiable",
    level=Level.ERROR,
    summary="The model compiles but one online (D-RTRL) gradient step cannot be built",
    tags=("learning", "analysis", "error"),
    check=check,
    opt_in_flag="--check-online-grad",
)
