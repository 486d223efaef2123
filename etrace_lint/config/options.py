"""Every option of etrace-lint, declared once.

One :class:`Option` per setting (flake8's ``add_option(..., parse_from_config=True)``):
its name, type, default, help, ``[tool.etrace-lint]`` key and command-line flags.
Everything else is built from :data:`OPTIONS`:

- the argument parser (``cli.build_parser``) and how a flag combines with the file's value;
- the ``[tool.etrace-lint]`` reader and its did-you-mean errors (``config.load_settings``);
- the typed :class:`~etrace_lint.config.settings.Settings` (one field per option) and the
  typed :class:`~etrace_lint.config.settings.EngineSettings` the engine, verify and the workers read;
- the configuration reference of the documentation site (``cli.docs.options_markdown``).

Adding an option is adding a row here; a new ``kind`` also needs a reader in
``config._READERS`` and, when it has a flag, a converter in ``cli._CONVERTERS``.
This module imports nothing heavy: configuration is read before JAX.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from ..core.findings import Level
from ..core.output_formats import FORMATS
from ..core.rule import DOCS_URL

LEVELS = tuple(level.value for level in Level)


@dataclass(frozen=True)
class Option:
    """One setting: where a user sets it and what the engine gets from it."""

    name: str  # the Settings field
    type: str  # its annotation
    default: Any = None  # a list or dict is copied for each Settings
    help: str = ""
    flags: tuple[str, ...] = ()  # on the command line; ("paths",) is positional; (): the file only
    key: str | None = None  # in [tool.etrace-lint]; "verify.steps" is `steps` of [tool.etrace-lint.verify]
    kind: str = "str"  # how a value is read from a flag or the file; see config._READERS
    group: str = "running"
    metavar: str | None = None
    choices: tuple[str, ...] = ()
    minimum: str | None = None  # "zero" or "positive": a usage error below it, from a flag or the file
    combine: str = "replace"  # a flag's value and the file's: replace, extend (lists) or update (tables)
    engine: bool = False  # the engine reads it: a field of settings.EngineSettings too
    shown_default: str | None = None  # the default as users read it, when ``default`` does not say it
    const: Any = True  # what a flag of kind "flag" sets
    factory: Callable[[], Any] | None = None  # the default, computed for each Settings
    negation: str = ""  # a flag that sets a flag option to False ("--no-probe"), for a default that is on
    negation_help: str = ""  # the negation's help, when "do not <flag>" does not read

    @property
    def flag(self) -> str:
        """The flag that names the option in messages (the long one)."""
        return self.flags[-1] if self.flags else ""

    @property
    def positional(self) -> bool:
        return bool(self.flags) and not self.flags[0].startswith("-")

    def default_text(self) -> str:
        """The default in words, for ``--help`` and the configuration reference ("" when there is nothing to say)."""
        if self.shown_default is not None:
            return self.shown_default
        value = self.default
        if value is None or value is False or value == [] or value == {} or self.kind == "flag":
            return ""
        if isinstance(value, Level):
            return value.value
        if isinstance(value, float):
            return f"{value:g}"
        if isinstance(value, list):
            return ",".join(value)
        return str(value)


OPTIONS: tuple[Option, ...] = (
    Option("paths", "list[str]", ["."], "files, folders or file.py::factory to lint", flags=("paths",),
           key="paths", kind="paths", group="", shown_default="."),
    # output
    Option("output_format", "str", "text", "how findings are printed", flags=("--output-format",),
           kind="choice", choices=FORMATS, group="output"),
    Option("sarif", "str | None", None, "also write a SARIF 2.1.0 log to FILE", flags=("--sarif",),
           metavar="FILE", group="output"),
    Option("output_file", "str | None", None, "write the main output to FILE", flags=("-o", "--output-file"),
           metavar="FILE", group="output"),
    Option("quiet", "bool", False, "print findings only, one line each, no summary, warnings or progress",
           flags=("-q", "--quiet"), kind="flag", group="output"),
    Option("statistics", "bool", False, "print the number of findings per rule", flags=("--statistics",),
           kind="flag", group="output"),
    Option("show_info", "bool", False, "also show note-level findings", flags=("--show-info",), key="show-info",
           kind="flag", group="output"),
    Option("show_flows", "bool", False, "print each finding's path under it in the text output",
           flags=("--show-flows",), key="show-flows", kind="flag", group="output"),
    Option("color", "bool | None", None, "color the text output; auto colors a terminal unless NO_COLOR is "
           "set", flags=("--color",), kind="color", choices=("auto", "always", "never"), group="output",
           shown_default="auto"),
    Option("root", "str", None, "paths in the output are relative to this folder", flags=("--root",),
           kind="folder", metavar="DIR", group="output", factory=os.getcwd, shown_default="the current folder"),
    Option("docs_url", "str", DOCS_URL, "where the documentation site is published: SARIF's helpUri and the "
           "language server's links point to each rule's page under it", flags=("--docs-url",), key="docs-url",
           metavar="URL", group="output"),
    # rule selection
    Option("select", "list[str]", [], "only these rules (ids, prefixes or names, comma separated)",
           flags=("--select",), key="select", kind="list", metavar="IDS", group="rule selection",
           shown_default="the rules on by default"),
    Option("extend_select", "list[str]", [], "rules added to the selection, such as opt-in rules",
           flags=("--extend-select",), key="extend-select", kind="list", metavar="IDS", group="rule selection",
           combine="extend"),
    Option("ignore", "list[str]", [], "rules left out (ids, prefixes or names, comma separated)",
           flags=("--ignore",), key="ignore", kind="list", metavar="IDS", group="rule selection", combine="extend"),
    Option("per_file_ignores", "dict[str, list[str]]", {}, "rules left out in the files matching a glob",
           key="per-file-ignores", kind="per-file-ignores", group="rule selection"),
    Option("levels", "dict[str, Level]", {}, "the level of the findings of a rule (id, prefix or name): "
           "note, warning or error; the most specific selector wins", key="levels", kind="levels",
           group="rule selection"),
    Option("fail_level", "Level", Level.WARNING, "lowest level that makes the run fail", flags=("--fail-level",),
           key="fail-level", kind="level", choices=LEVELS, group="rule selection"),
    Option("exit_zero", "bool", False, "exit 0 even with findings", flags=("--exit-zero",), kind="flag",
           group="rule selection"),
    Option("exclude", "list[str]", [], "replace the configured exclude globs", flags=("--exclude",),
           key="exclude", kind="list", metavar="GLOBS", group="rule selection"),
    Option("extend_exclude", "list[str]", [], "globs of files and folders not linted, added to exclude",
           flags=("--extend-exclude",), key="extend-exclude", kind="list", metavar="GLOBS", group="rule selection",
           combine="extend"),
    Option("include_suppressed", "bool", False, "pass suppressed findings to the output (SARIF suppressions)",
           flags=("--include-suppressed",), kind="flag", group="rule selection"),
    Option("baseline", "str | None", None, "report only findings not recorded in FILE", flags=("--baseline",),
           metavar="FILE", group="rule selection"),
    Option("write_baseline", "str | None", None, "record today's findings in FILE", flags=("--write-baseline",),
           metavar="FILE", group="rule selection"),
    Option("check_online_grad", "bool", False, "also check that one online gradient step can be built "
           "(ETL205; slower; selecting ETL205 by its id or name turns it on)", flags=("--check-online-grad",),
           key="check-online-grad", kind="flag", group="rule selection", engine=True),
    Option("probe", "bool", True, "measure each model's first online gradient steps against BPTT: does "
           "the step run, does each weight get a non-zero finite gradient in BPTT's direction (ETL410-ETL424), "
           "in every output format; --no-probe turns it off", flags=("--probe",), key="probe", kind="flag",
           group="rule selection", engine=True, negation="--no-probe"),
    # gradient verification
    Option("verify", "bool", False, "compare online gradients (d_rtrl, pp_prop) with exact BPTT per weight",
           flags=("--verify",), kind="flag", group="gradient verification", engine=True),
    Option("verify_steps", "int | None", None, "sequence length", flags=("--verify-steps",), key="verify.steps",
           kind="int", metavar="T", minimum="positive", group="gradient verification", engine=True,
           shown_default="16"),
    Option("verify_batch", "int | None", None, "batch size", flags=("--verify-batch",), key="verify.batch",
           kind="int", metavar="B", minimum="positive", group="gradient verification", engine=True,
           shown_default="the target's own batch, else 4"),
    Option("verify_algorithms", "list[str] | None", None, "online algorithms compared (comma separated)",
           flags=("--verify-algorithms",), key="verify.algorithms", kind="list", metavar="ALGOS",
           group="gradient verification", engine=True, shown_default="d_rtrl,pp_prop"),
    Option("verify_seed", "int | None", None, "random seed of the inputs", flags=("--verify-seed",),
           key="verify.seed", kind="int", metavar="SEED", group="gradient verification", engine=True,
           shown_default="0"),
    Option("verify_cosine_floor", "float | None", None, "lowest cosine similarity to BPTT that passes",
           flags=("--verify-cosine-floor",), key="verify.cosine-floor", kind="float", metavar="COS",
           group="gradient verification", engine=True, shown_default="0.5"),
    Option("device", "str | None", None, "JAX platform for --verify: cpu, gpu, ...", flags=("--device",),
           key="verify.device", metavar="DEVICE", group="gradient verification", engine=True,
           shown_default="JAX's default device"),
    # learning-rule advice
    Option("advise", "bool", False, "measure every braintrace algorithm on each model and recommend one "
           "(`etrace-lint advise PATHS`)", flags=("--advise",), kind="flag", group="gradient verification",
           engine=True),
    Option("advise_algorithms", "list[str] | None", None, "algorithms the advice measures (comma separated, "
           "`name:multi-step` for a multi-step VJP)", flags=("--algorithms",), key="advise.algorithms", kind="list",
           metavar="ALGOS", group="gradient verification", engine=True, shown_default="all installed"),
    Option("advise_steps", "int | None", None, "sequence length of the advice's comparison with BPTT",
           flags=("--steps",), key="advise.steps", kind="int", metavar="T", minimum="positive",
           group="gradient verification", engine=True, shown_default="8"),
    Option("advise_batch_size", "int | None", None, "training batch size the advice gives trace memory at",
           flags=("--batch-size",), key="advise.batch-size", kind="int", metavar="B", minimum="positive",
           group="gradient verification", engine=True, shown_default="the target's batch"),
    Option("memory_budget", "int | None", None, "memory an algorithm's trace must fit in at the training batch",
           flags=("--memory-budget",), key="advise.memory-budget", kind="memory", metavar="SIZE",
           group="gradient verification", engine=True, shown_default="the device's memory"),
    # fixes
    Option("fix", "bool", False, "apply safe fixes in place", flags=("--fix",), kind="flag", group="fixes"),
    Option("unsafe_fixes", "bool", False, "also apply fixes that change numerics", flags=("--unsafe-fixes",),
           key="unsafe-fixes", kind="flag", group="fixes"),
    Option("diff", "bool", False, "print fixes as a unified diff and write nothing", flags=("--diff",),
           kind="flag", group="fixes"),
    # running
    Option("debug", "bool", False, "show tracebacks of tool errors", flags=("--debug",), kind="flag"),
    Option("jobs", "int", 0, "at most N worker processes; more than one starts only when the models left take "
           "longer than starting one", flags=("-j", "--jobs"), key="jobs", kind="int", metavar="N",
           minimum="zero", shown_default="0, one per core"),
    Option("timeout", "float", 300.0, "per-target time limit in seconds", flags=("--timeout",), key="timeout",
           kind="float", metavar="SECONDS", minimum="positive"),
    Option("memory_limit", "int", 4 * 1024 ** 3,
           "memory one worker may hold while it lints a target (such as 4GiB or 512MiB; none: no limit); a target "
           "past it is stopped and reported", flags=("--memory-limit",), key="memory-limit", kind="memory",
           metavar="SIZE", shown_default="4GiB"),
    Option("use_cache", "bool", True, "lint everything again, write no cache", flags=("--no-cache",),
           kind="flag", const=False),
    Option("cache_dir", "str", ".etrace-lint-cache", "where results are cached", flags=("--cache-dir",),
           key="cache-dir", kind="folder", metavar="DIR"),
    Option("compile_options", "dict[str, Any]", {}, "keywords of braintrace.compile_etrace_graph, such as "
           "include-recurrent-mixing = true or control-flow = { cond = \"opaque\" }", key="compile-options",
           kind="compile-options"),
    Option("environ", "dict[str, Any] | None", None,
           "brainstate.environ setting to build and trace targets under, such as "
           "dt=0.1ms (repeatable or comma separated; a target's decorator overrides it)", flags=("--environ",),
           key="environ", kind="environ", metavar="KEY=VALUE", combine="update", engine=True),
    Option("shard", "str | None", None, "lint only part K of N of the targets (each file in one part), for N CI "
           "runners; combine their logs with `etrace-lint merge`", flags=("--shard",), kind="shard",
           metavar="K/N"),
    Option("list_targets", "bool", False, "print the targets a run would execute (import nothing, run nothing) "
           "and exit", flags=("--list-targets",), kind="flag"),
    Option("preload", "list[str]", [], "libraries every worker needs, imported once for all of them",
           key="preload", kind="list"),
    Option("drop_env", "list[str]", [], "environment variables (or patterns such as AWS_*) removed before any "
           "model code runs", flags=("--drop-env",), key="drop-env", kind="list", metavar="NAMES",
           combine="extend"),
    Option("daemon", "bool", True, "serve the run from a warm background process of this project, started on "
           "first use (`etrace-lint daemon status|stop`); off with ETRACE_LINT_NO_DAEMON=1, and where CI is set "
           "unless asked for; --no-daemon runs directly", flags=("--daemon",), key="daemon", kind="flag",
           negation="--no-daemon", negation_help="run in this process, without the background process"),
    Option("daemon_idle_timeout", "float", 300.0, "seconds the background process waits for the next run before "
           "it ends", flags=("--daemon-idle-timeout",), key="daemon-idle-timeout", kind="float", metavar="SECONDS",
           minimum="positive"),
    Option("config", "str | None", None, "read [tool.etrace-lint] from this file", flags=("--config",),
           metavar="PYPROJECT", shown_default="the nearest pyproject.toml with the table"),
    Option("isolated", "bool", False, "ignore every configuration file", flags=("--isolated",), kind="flag"),
    # the conventions a ruff user brings: a buffer on stdin, watching, fix reporting, verbosity, settings
    Option("stdin_filename", "str | None", None, "the path of the source read from stdin (`-`): its configuration, "
           "the name findings give it and the folder its imports are resolved from", flags=("--stdin-filename",),
           metavar="FILE"),
    Option("watch", "bool", False, "lint again whenever a Python file or pyproject.toml under the paths changes, "
           "reusing the warm workers and the cache", flags=("-w", "--watch"), kind="flag"),
    Option("show_fixes", "bool", False, "list the fixes applied (with --fix), or the fixes available, by file",
           flags=("--show-fixes",), key="show-fixes", kind="flag", group="fixes"),
    Option("fix_only", "bool", False, "apply fixes but report no remaining findings, and exit 0 unless a target "
           "could not be linted (implies --fix)", flags=("--fix-only",), key="fix-only", kind="flag", group="fixes"),
    Option("verbose", "bool", False, "also say which configuration was read, what was found, and how each model "
           "was linted (from the cache, or in how many seconds)", flags=("-v", "--verbose"), kind="flag",
           group="output"),
    Option("silent", "bool", False, "print nothing at all; the exit code still says whether there are findings",
           flags=("-s", "--silent"), kind="flag", group="output"),
    Option("show_settings", "bool", False, "print the effective configuration, where each value came from, and exit",
           flags=("--show-settings",), kind="flag", group="output"),
)

BY_KEY = {option.key: option for option in OPTIONS if option.key}
# the keys of [tool.etrace-lint] itself; "verify" holds the verify.* options
KNOWN_KEYS = tuple(dict.fromkeys(key.split(".")[0] for key in BY_KEY))
SECTIONS = tuple(dict.fromkeys(key.split(".")[0] for key in BY_KEY if "." in key))
ENGINE_OPTIONS = tuple(option for option in OPTIONS if option.engine)


def below_minimum(value: float, minimum: str | None) -> bool:
    """Whether a number breaks an option's ``minimum``: "zero" (0 or more) or "positive"."""
    return (minimum == "zero" and value < 0) or (minimum == "positive" and value <= 0)


MINIMUM_WORDS = {"zero": "zero or more", "positive": "positive"}


def option_for_flag(flag: str) -> Option:
    """The option a command-line flag sets: ``option_for_flag("--verify").name == "verify"``.

    A rule's ``opt_in_flag`` names its option this way; an unknown flag is a
    KeyError that suggests the closest one.
    """
    for option in OPTIONS:
        if flag in option.flags and not option.positional:
            return option
    known = [f for option in OPTIONS if not option.positional for f in option.flags]
    raise KeyError(f"no option has the flag {flag!r}{did_you_mean(flag, known)}")


def flag_is_on(flag: str, values: Mapping[str, object]) -> bool:
    """Whether a run's option ``values`` (by name: ``settings.option_values``) have the opt-in ``flag`` set
    (an opt-in rule runs)."""
    return bool(values.get(option_for_flag(flag).name))


def did_you_mean(word: str, known: Iterable[str], quote: bool = False) -> str:
    """``"; did you mean X?"`` naming the closest of ``known``, or ``""`` when none is close."""
    close = difflib.get_close_matches(word, list(known), n=1)
    if not close:
        return ""
    return f"; did you mean {close[0]!r}?" if quote else f"; did you mean {close[0]}?"


def did_you_mean_rule(word: str) -> str:
    """:func:`did_you_mean` for a rule: the closest id, else the closest name."""
    from ..core.registry import all_rules  # lazy: --version and --help run without loading the rules

    rules = all_rules()
    return did_you_mean(word.upper(), rules) or did_you_mean(word, [rule.name for rule in rules.values()])
