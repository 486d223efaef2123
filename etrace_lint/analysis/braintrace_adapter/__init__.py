"""The adapter over braintrace's and brainstate's private layout: the only package that
reads it (JAX's own layout is read by :mod:`etrace_lint.analysis.jaxpr_view`).

- :mod:`.compiler`: running the compiler, its records, its exceptions and the traced
  step's state tables (what the engine and the record rules need);
- :mod:`.records`: each compiler record read once into a typed, frozen :class:`RecordView`,
  the only form of a record the rest of the linter sees;
- :mod:`.eager_checks`: brainstate's error checks on concrete values answered on the
  host while a factory builds its model, instead of one XLA compile per check;
- :mod:`.graph`: read-only views of a compiled ``ETraceGraph`` (hidden groups,
  relations, vmap decompositions, one online gradient step) for the rules' typed view
  and --verify;
- :mod:`.layers`: what braintrace.nn offers for a layer of another library.

When braintrace changes its private layout between versions, only this package changes.
"""

from typing import TYPE_CHECKING

from .compiler import (
    Compilation,
    ErrorSubject,
    UntracedState,
    compile_model,
    compiled_states,
    ensure_states,
    exception_subject,
    hidden_invar_values,
    hidden_invars,
    hidden_outvars,
    is_etp_primitive,
    model_states,
    quiet,
    relation_weight_paths,
    state_role,
    state_source_info,
    traced_jaxpr,
    untraced_states,
    weight_invar_values,
    weight_invars,
)
from .eager_checks import host_error_checks
from .graph import (
    GroupView,
    RelationView,
    TraceShapeRefusal,
    WeightFnSlopes,
    ZeroDfRelation,
    adds_same_step_gradients,
    algorithm_class,
    braintrace_version,
    conv_bias_shape,
    detaches_loops_before_hidden,
    elementwise_factor,
    elementwise_slopes,
    group_views,
    is_vmap_decomposition,
    lora_factor_operands,
    lora_factor_value,
    online_gradient_error,
    relation_output_ids,
    relation_views,
    step_param_states,
    trace_shape_refusals,
    vmap_decomposition_warnings,
    vmap_warning_maps_input_only,
    vmap_warning_primitive,
    weight_fn_operand,
    zero_df_relations,
)
from .layers import etp_layer_for, in_braintrace_nn
from .records import RecordView, record_view
from .step_states import (
    ModelState,
    constant_hidden_writes,
    is_global_random_state,
    state_invars,
    step_output_vars,
)

if TYPE_CHECKING:  # braintrace's own classes, for the engine's annotations only
    from braintrace._compiler.graph import ETraceGraph
    from braintrace._compiler.module_info import ModuleInfo

__all__ = [
    "ETraceGraph",
    "ModuleInfo",
    "GroupView",
    "RecordView",
    "RelationView",
    "ModelState",
    "UntracedState",
    "TraceShapeRefusal",
    "WeightFnSlopes",
    "ZeroDfRelation",
    "Compilation",
    "adds_same_step_gradients",
    "braintrace_version",
    "detaches_loops_before_hidden",
    "algorithm_class",
    "compile_model",
    "compiled_states",
    "conv_bias_shape",
    "constant_hidden_writes",
    "elementwise_factor",
    "elementwise_slopes",
    "weight_fn_operand",
    "lora_factor_operands",
    "lora_factor_value",
    "ensure_states",
    "etp_layer_for",
    "ErrorSubject",
    "exception_subject",
    "group_views",
    "hidden_invar_values",
    "hidden_invars",
    "host_error_checks",
    "hidden_outvars",
    "in_braintrace_nn",
    "is_etp_primitive",
    "is_global_random_state",
    "is_vmap_decomposition",
    "model_states",
    "online_gradient_error",
    "quiet",
    "record_view",
    "relation_output_ids",
    "relation_views",
    "relation_weight_paths",
    "state_invars",
    "state_role",
    "state_source_info",
    "step_output_vars",
    "step_param_states",
    "trace_shape_refusals",
    "traced_jaxpr",
    "untraced_states",
    "vmap_decomposition_warnings",
    "vmap_warning_maps_input_only",
    "vmap_warning_primitive",
    "weight_invar_values",
    "weight_invars",
    "zero_df_relations",
]
