from etrace_lint.findings import Level
from etrace_lint.rule import Hit, Rule


def check(context):
    from etrace_lint.analysis import plain_op_weights, vmap_warnings
    from etrace_lint.engine import format_path

    warnings = vmap_warnings(context)
    if not warnings:
        return
    uses = plain_op_weights(context)
    if not uses:
        yield Hit(message=f"an ETP op was decomposed under vmap: {warnings[0]}")
        return
    for use in uses:
        yield Hit(
            message=(f"weight {format_path(use.weight)} is mapped over by `vmap`, so its ETP op was decomposed "
                     f"into plain JAX ops and it will not learn online"),
            weight_path=use.weight, eqn=use.site,
            properties={"hiddenState": format_path(use.hidden), "braintraceWarning": warnings[0]})


RULE = Rule(
    id="ETL203",
    name="etp-weight-under-vmap",
    level=Level.WARNING,
    summary="An ETP op whose weight is mapped over by vmap is decomposed into plain ops and its weight does not learn",
    tags=("learning", "analysis"),
    check=check,
)
