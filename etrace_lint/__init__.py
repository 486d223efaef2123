"""etrace-lint: which weights of a braintrace model really learn online, and why not.

This module stays light: model files import it for the :func:`target`
decorator, and a cached run must not import JAX.
"""

from __future__ import annotations

import importlib
import os as _os
from typing import TYPE_CHECKING, Mapping

from .core.marker import TARGET_ATTRIBUTE, target

if TYPE_CHECKING:  # annotations only: the API loads the engine (see check below)
    from IPython.core.interactiveshell import InteractiveShell

    from .api import CheckResult

# An installed etrace-lint carries its rules as ``etrace_lint/rules``; a source
# checkout keeps them in ``rules/`` at the top of the repository. When this
# package is imported from a checkout (``python -m etrace_lint`` or pytest from
# the repository root), ``etrace_lint.rules`` is that folder, and only it: the
# rest of the repository (tests, bench, examples) is not part of the package.
_here = _os.path.dirname(_os.path.abspath(__file__))
_checkout_rules = _os.path.join(_os.path.dirname(_here), "rules")
if not _os.path.isdir(_os.path.join(_here, "rules")) and _os.path.isfile(
        _os.path.join(_checkout_rules, "__init__.py")):
    import importlib.util as _util
    import sys as _sys

    if __name__ + ".rules" not in _sys.modules:
        _spec = _util.spec_from_file_location(__name__ + ".rules", _os.path.join(_checkout_rules, "__init__.py"),
                                              submodule_search_locations=[_checkout_rules])
        assert _spec is not None and _spec.loader is not None  # a file location always gives both
        rules = _util.module_from_spec(_spec)
        _sys.modules[_spec.name] = rules
        _spec.loader.exec_module(rules)

__version__ = "0.1.0"
__all__ = ["check", "check_target", "target", "__version__"]


def check(model: object, *inputs: object, name: str | None = None, batch_size: int | None = None,
          compile_options: Mapping[str, object] | None = None, **options: object) -> CheckResult:
    """Lint a model built in this process (see :func:`etrace_lint.api.check`)."""
    # the API loads the engine, the policy and the writers: importing etrace_lint must stay light
    from .api import check as check_model

    return check_model(model, *inputs, name=name, batch_size=batch_size, compile_options=compile_options, **options)


def check_target(target: str, **options: object) -> CheckResult:
    """Lint ``"file.py::factory"``, a file or a folder in this process (see :func:`etrace_lint.api.check_target`)."""
    # the API loads the engine, the policy and the writers: importing etrace_lint must stay light
    from .api import check_target as check_spec

    return check_spec(target, **options)


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """``%load_ext etrace_lint``: lint each model a later cell compiles and show the result below the cell."""
    # by name: every stage reads this package's version, so the package itself imports no stage
    importlib.import_module(f"{__name__}.integrations.notebook").load(ipython)


def unload_ipython_extension(ipython: InteractiveShell) -> None:
    """``%unload_ext etrace_lint``: braintrace's compiles as they were."""
    importlib.import_module(f"{__name__}.integrations.notebook").unload(ipython)


__all__ = ["TARGET_ATTRIBUTE", "__version__", "check", "check_target", "target"]
