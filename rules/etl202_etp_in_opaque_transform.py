from etrace_lint.findings import Level
from etrace_lint.rule import Hit, Rule


def check(context):
    from etrace_lint.analysis import OPAQUE_TRANSFORMS
    from etrace_lint.braintrace_adapter import is_etp_primitive
    from etrace_lint.engine import format_path
    from etrace_lint.jaxpr_view import invars, primitive_name

    flow = context.weight_provenance
    for site in context.sites:
        if not is_etp_primitive(site.eqn):
            continue
        wrappers = [p for p in site.parents if primitive_name(p) in OPAQUE_TRANSFORMS]
        if not wrappers:
            continue
        outer = site.parents[0]
        weights = sorted({w for v in invars(outer) for w in flow.get(v, ())} - context.learning_weights)
        if not weights:
            continue
        transform = primitive_name(wrappers[0])
        yield Hit(
            message=(f"ETP op {primitive_name(site.eqn)} inside `{transform}` is invisible to the ETrace "
                     f"compiler: {', '.join(format_path(w) for w in weights)} will not learn online"),
            weight_path=weights[0], eqn=site,
            related=((f"`{transform}` applied here", type(site)(wrappers[0], site.parents[:site.parents.index(wrappers[0])])),),
            properties={"transform": transform, "weights": [format_path(w) for w in weights]})


RULE = Rule(
    id="ETL202",
    name="etp-op-in-opaque-transform",
    level=Level.WARNING,
    summary="An ETP op inside jax.checkpoint, custom_jvp or custom_vjp is silently ignored by the compiler",
    tags=("learning", "analysis", "control-flow"),
    check=check,
)
