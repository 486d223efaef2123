"""The lint's side: what ``etrace_lint.check_target`` says of each weight, as a user gets it (the probe on; with
``verify``, as a ``--verify`` run gets it).

Run in a process of its own (``python -m tests.fuzz lint FILE...``), never beside the oracle. Only the
public API: ``check_target(path).weights()``, and the rules of the findings about each weight (to name a
disagreement's mechanism in the table).
"""

from __future__ import annotations

import os
from typing import Any


def lint_files(paths: list[str], verify: bool = False) -> list[dict[str, Any]]:
    import etrace_lint

    records = []
    for path in paths:
        try:
            result = etrace_lint.check_target(path, verify=verify)
        except Exception as exc:  # the linter itself raised: a disagreement of its own kind
            records.append({"file": os.path.basename(path), "crash": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        rules: dict[str, set[str]] = {}
        for finding in result.findings:
            if finding.subject.weight:
                rules.setdefault(finding.subject.weight, set()).add(finding.rule_id)
        records.append({"file": os.path.basename(path), "weights": result.weights(),
                        "rules": {weight: sorted(found) for weight, found in rules.items()},
                        "model_rules": sorted({f.rule_id for f in result.findings}),
                        "model_errors": sorted({f.rule_id for f in result.findings if f.level.value == "error"}),
                        "tool_errors": [e.message[:300] for e in result.tool_errors]})
    return records
