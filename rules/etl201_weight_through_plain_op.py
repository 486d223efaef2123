from etrace_lint.findings import Level
from etrace_lint.rule import Hit, Rule


def check(context):
    from etrace_lint.analysis import first_per_weight
    from etrace_lint.engine import format_path
    from etrace_lint.jaxpr_view import primitive_name

    # an op that vmap decomposed is ETL203's: the user wrote an ETP op there
    uses = first_per_weight([u for u in context.plain_uses if not u.decomposed])
    for use in uses:
        op = primitive_name(use.site.eqn)
        weight, hidden = format_path(use.weight), ", ".join(format_path(h) for h in use.hidden)
        if use.partial:
            message = (f"weight {weight} learns online through an ETP op, but this plain `{op}` also "
                       f"carries it into hidden state {hidden}; that path is missing from its online gradient")
        else:
            message = (f"weight {weight} reaches hidden state {hidden} through a plain `{op}` instead of "
                       f"an ETP op, so it gets no online gradient")
        yield Hit(message=message, weight_path=use.weight, eqn=use.site,
                  related=(("weight created here", use.weight),),
                  properties={"hiddenStates": [format_path(h) for h in use.hidden], "primitive": op,
                              "partial": use.partial})


RULE = Rule(
    id="ETL201",
    name="weight-through-plain-op",
    level=Level.WARNING,
    summary="A weight reaches a hidden state through a plain JAX op instead of an ETP op, so that path gets no online gradient",
    tags=("learning", "analysis"),
    check=check,
)
