from etrace_lint.findings import Level
from etrace_lint.rule import Hit, Rule


def check(context):
    from etrace_lint.analysis import plain_op_weights, vmap_warnings
    from etrace_lint.engine import format_path
    from etrace_lint.jaxpr_view import primitive_name

    if vmap_warnings(context):
        return  # ETL203 explains these weights
    for use in plain_op_weights(context):
        op = primitive_name(use.site.eqn) if use.site is not None else "plain JAX ops"
        yield Hit(
            message=(f"weight {format_path(use.weight)} reaches hidden state {format_path(use.hidden)} "
                     f"through a plain `{op}` instead of an ETP op, so it gets no online gradient"),
            weight_path=use.weight, eqn=use.site,
            related=(("weight created here", use.weight),),
            properties={"hiddenState": format_path(use.hidden), "primitive": op})


RULE = Rule(
    id="ETL201",
    name="weight-through-plain-op",
    level=Level.WARNING,
    summary="A weight reaches a hidden state through plain JAX ops instead of an ETP op and never learns online",
    tags=("learning", "analysis"),
    check=check,
)
