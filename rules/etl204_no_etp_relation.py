from etrace_lint.findings import Level
from etrace_lint.rule import Hit, Rule


def check(context):
    if context.learning_weights:
        return
    from etrace_lint.analysis import opaque_transform_of

    if context.compiler_warned:
        return  # the compiler explains its exclusions itself
    if context.plain_uses or context.vmap_warnings or context.buffered_uses:
        return  # ETL201 / ETL203 / ETL206 name each weight on its line
    if any(opaque_transform_of(site) is not None for site in context.flow.etp_sites):
        return  # ETL202 names the op
    count = len(context.weight_paths)
    if count:
        message = (f"no weight of this model learns online: none of its {count} ParamState"
                   f"{'s' if count != 1 else ''} is connected to a hidden state through an ETP op")
    else:
        message = "no weight of this model learns online: it has no ParamState at all"
    yield Hit(message=message, properties={"weights": count})


RULE = Rule(
    id="ETL204",
    name="no-etp-relation",
    level=Level.WARNING,
    summary="The model compiles but no weight is connected to a hidden state by an ETP op",
    tags=("learning", "analysis"),
    check=check,
)
