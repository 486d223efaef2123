from etrace_lint.findings import Level
from etrace_lint.rule import Hit, Rule


def check(context):
    if context.learning_weights or not context.weight_paths:
        return
    from etrace_lint.braintrace_adapter import record_level

    if any(record_level(r) in ("warning", "error") for r in context.compilation.records):
        return  # the compiler explains its exclusions itself
    from etrace_lint.analysis import plain_op_weights, vmap_warnings
    from etrace_lint.braintrace_adapter import is_etp_primitive

    if any(is_etp_primitive(site.eqn) for site in context.sites) or vmap_warnings(context):
        return  # an ETP op exists but is hidden from the compiler: ETL202/ETL203 say where
    if plain_op_weights(context):
        return  # ETL201 names each weight
    count = len(context.weight_paths)
    yield Hit(message=(f"no weight of this model learns online: none of its {count} ParamState"
                       f"{'s' if count != 1 else ''} is connected to a hidden state through an ETP op"),
              properties={"weights": count})


RULE = Rule(
    id="ETL204",
    name="no-etp-relation",
    level=Level.WARNING,
    summary="The model compiles but no weight is connected to a hidden state by an ETP op",
    tags=("learning", "analysis"),
    check=check,
)
