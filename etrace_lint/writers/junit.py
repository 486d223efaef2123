"""JUnit XML, as CI test-report viewers read it (GitLab, Jenkins, Azure; ruff's ``junit``).

One ``testsuite`` a file, one failing ``testcase`` a finding (``classname``
the file, ``name`` the rule id), one erroring ``testcase`` a target that
could not be linted; a clean run is one passing test case, so a report
viewer shows that the lint ran. Built with the standard library's
ElementTree, which escapes every value.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, TextIO

from ..core.findings import Finding, ToolError
from .run_info import RunInfo

if TYPE_CHECKING:  # annotations only: printing needs neither the policy nor the settings it loads
    from ..policy.decide import Outcome


def write_junit(outcome: Outcome, info: RunInfo, stream: TextIO) -> None:
    shown = [f for f in outcome.findings if not f.suppressed]
    suites = ET.Element("testsuites", name="etrace-lint", tests=str(max(1, len(shown) + len(outcome.tool_errors))),
                        failures=str(len(shown)), errors=str(len(outcome.tool_errors)))
    by_file: dict[str, list[tuple[str, Finding | ToolError]]] = {}
    for finding in shown:
        by_file.setdefault(info.relpath(finding.path), []).append(("failure", finding))
    for error in outcome.tool_errors:
        by_file.setdefault(info.relpath(error.location.path), []).append(("error", error))
    for path in sorted(by_file):
        cases = by_file[path]
        suite = ET.SubElement(suites, "testsuite", name=path, tests=str(len(cases)),
                              failures=str(sum(kind == "failure" for kind, _ in cases)),
                              errors=str(sum(kind == "error" for kind, _ in cases)))
        for kind, item in cases:
            loc = item.location
            where = f"line {loc.line}, col {loc.column}"
            if isinstance(item, Finding):
                name, text = f"etrace-lint.{item.rule_id}", f"{where}, {item.message} [{item.target}]"
                junit_type = item.level.value
            else:
                name, text = "etrace-lint.tool-error", f"{where}, {item.message} [{item.target}]"
                junit_type = item.reason
            case = ET.SubElement(suite, "testcase", name=name, classname=path, file=path, line=str(loc.line))
            ET.SubElement(case, kind, message=item.message, type=junit_type).text = text
    if not by_file:
        suite = ET.SubElement(suites, "testsuite", name="etrace-lint", tests="1", failures="0", errors="0")
        ET.SubElement(suite, "testcase", name="No findings", classname="etrace-lint")
    ET.indent(suites)
    stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    stream.write(ET.tostring(suites, encoding="unicode"))
    stream.write("\n")
