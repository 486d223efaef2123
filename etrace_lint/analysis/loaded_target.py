"""A target once its factory ran: the model, its example inputs and what the user configured for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..core.findings import Location
from ..discovery.discover import TargetSpec


@dataclass
class LoadedTarget:
    spec: TargetSpec
    name: str
    model: Any
    inputs: tuple[Any, ...]
    compile_options: dict[str, Any] = field(default_factory=dict)
    batch_size: int | None = None
    verify_options: dict[str, Any] = field(default_factory=dict)
    environ: dict[str, Any] = field(default_factory=dict)  # the brainstate.environ values it was built under
    factory_location: Location = field(kw_only=True)  # the line that built the model: every finding can point there
    # whether the learner trains with a single-step VJP (braintrace's default); a compile a program made
    # says which its learner uses
    single_step_vjp: bool = field(default=True, kw_only=True)
    # the factory again, on another seed of brainstate's global random state: a model whose random initial weights
    # are another draw of them (None where no factory built the model: a model handed over, or one a program
    # compiled); it raises what the factory raises
    rebuilt: Callable[[int], Any] | None = field(default=None, kw_only=True, repr=False)
