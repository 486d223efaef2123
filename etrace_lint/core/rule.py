"""What a rule is: metadata as plain data, and one typed shape per kind of rule.

A rule file in ``rules/`` defines ``RULE`` as one of :class:`RecordRule`, :class:`ErrorRule`,
:class:`RecordErrorRule`, :class:`AnalysisRule`, :class:`MeasuredRule` or :class:`SuppressionRule`;
its documentation lives beside it in a Markdown file of the same stem. The three consumers of a
rule's text (``etrace-lint rule``, SARIF ``tool.driver.rules`` and the rule's page on the
documentation site) all read the metadata every kind shares (:class:`Rule`).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Iterable, Literal, Mapping, Protocol, TypeVar

from .details import Violation
from .findings import NO_SUBJECT, Finding, Fix, Level, Subject
from .naming import StatePath
from .weight_verdict import WeightVerdict

FactsT = TypeVar("FactsT")
V = TypeVar("V", bound=Violation, covariant=True)  # a Hit[PlainOpPath] is a Hit[Violation]


@dataclass(frozen=True)
class ErrorMatch:
    """Recognises a compiler or tracing exception that this rule reports.

    ``types`` are exception class names (the class or any base); ``pattern``
    is searched in the exception message. ``origin`` restricts where the
    exception was raised: ``"any"``, ``"user"`` (user or JAX code while
    tracing) or a dotted module prefix such as ``"braintrace._op"``.
    ``kinds`` are DiagnosticKind values whose ERROR record explains this
    exception; such a record and the exception are reported once.
    """

    types: tuple[str, ...] = ()
    pattern: str = ""
    origin: str = "any"  # "any", "user" (raised while tracing the step) or a module prefix
    kinds: tuple[str, ...] = ()
    at_write: str = ""  # "param": the first ParamState write; "last": the write that failed

    @property
    def specificity(self) -> int:
        """Rules that look at the message or the raising module are tried first."""
        return 0 if self.pattern or self.origin not in ("any", "user") else 1

    def matches(self, class_names: Iterable[str], message: str, raised_in: str, through_user_code: bool,
                tracing: bool | None = None) -> bool:
        """``raised_in`` is the module of the innermost frame; ``through_user_code``
        tells whether the exception passed through the user's own code; ``tracing``
        whether it was raised before the step's jaxpr existed (a stock layer traced
        with the wrong inputs fails in library code only), None when unknown: then
        passing through the user's code stands for it."""
        names = set(class_names)
        if self.types and not names.intersection(self.types):
            return False
        if self.pattern and not re.search(self.pattern, message, re.S):
            return False
        if self.origin == "any":
            return True
        if self.origin == "user":
            return through_user_code if tracing is None else tracing
        return raised_in.startswith(self.origin)


class Site(Protocol):
    """An equation of the step as the analysis hands it out (``analysis/jaxpr_view.EqnSite``, which the core
    does not import): what a :class:`Hit` is on. A use's ``site`` from the context is one."""

    @property
    def primitive(self) -> str: ...


@dataclass(frozen=True)
class Hit(Generic[V]):
    """What a check of ours found, before it is located and turned into a Finding: its violation (the
    facts, which word the message), and where it is.

    The finding lands on ``eqn``'s line when it has one, else on the first line that applies ``weight_path``
    (an ETP op first; where the step applies the weight nowhere, the line that creates it; with
    ``at_creation``, the line that creates it always), else on the line that creates ``state_path``, else on
    the target's factory. Each of ``related`` is shown under its label, on its equation's line or on the line
    that creates its state; one that cannot be placed, or that is the finding's own line, is left out."""

    violation: V
    weight_path: StatePath | None = None  # the weight the finding is about: its subject, and where it lands
    state_path: StatePath | None = None
    eqn: Site | None = None
    related: tuple[tuple[str, Site | StatePath], ...] = ()  # (label, an equation or a state's path)
    subject: Subject = NO_SUBJECT  # what the finding is about; its weight comes from ``weight_path``
    at_creation: bool = False  # land on the line that creates ``weight_path``, not on the first that applies it

    @property
    def message(self) -> str:
        return self.violation.message()


@dataclass(frozen=True)
class RecordFacts:
    """What a compiler record says, in the user's names, for a rule to word its message.

    Paths are already display names (``cell.Wr.weight``); lines are lines of the
    user's file where the compiler's text only names an op or a weight.
    """

    kind: str
    level: str  # the level braintrace gave the record
    text: str  # braintrace's own message, on one line, with paths shown by name
    weight: str = ""
    hidden: tuple[str, ...] = ()
    weights: tuple[str, ...] = ()  # the weights a record lists (a scan's, an output path's)
    blocking: tuple[str, ...] = ()  # blocking weights, each with the line of its op: "Wh.weight (line 13)"
    primitive: str = ""
    op: str = ""  # the primitive as the user wrote it: "a matmul (braintrace.matmul / braintrace.nn.Linear)"
    context: Mapping[str, Any] = field(default_factory=dict)
    # ParamStates passed to the op in a position it does not train (``braintrace.matmul(w, h)``)
    misplaced: tuple[str, ...] = ()
    iterations: tuple[int, ...] = ()  # the unrolled scan iterations this weight's op belongs to (1-based)
    iteration_count: int = 0
    braintrace_version: str = ""  # the braintrace that compiled the model
    same_step_gradients: bool = True  # its single-step learners add a weight's same-step gradient (0.2.8 on)
    global_random_state: bool = False  # the state the record names is brainstate's global random state

    @property
    def weight_or_op(self) -> str:
        return self.weight or "this op's weight"

    def where_in_scan(self) -> str:
        """`` in unrolled iterations 1-2 of 3 of the scan``, or nothing outside an unrolled scan."""
        if not self.iterations or self.iteration_count < 2:
            return ""
        its = sorted(self.iterations)
        if len(its) == 1:
            which = f"iteration {its[0]}"
        elif its == list(range(its[0], its[-1] + 1)):
            which = f"iterations {its[0]}-{its[-1]}"
        else:
            which = "iterations " + ", ".join(map(str, its))
        return f" in {which} of the {self.iteration_count} unrolled iterations of its scan"


@dataclass(frozen=True)
class ErrorFacts:
    """What a compiler or tracing exception says, for a rule to word its message once the
    finding is placed."""

    exc: BaseException
    text: str  # the exception's first sentence, with paths shown by name
    primitive: str = ""  # the primitive of the equation the compiler was handling, if it says
    on_user_line: bool = False  # placed on a line of the user's step (not on the factory)


@dataclass(frozen=True)
class GradientFacts:
    """What --verify measured for one weight under one algorithm, for a --verify rule to word."""

    algorithm: str
    weight: str  # the weight as the code names it, with its leaf when only one leaf is reported
    leaves: str  # " (2 leaves; worst ['bias'])", or nothing for one leaf
    span: str  # "over 16 steps"
    verdict: str  # the worst leaf's verdict, its value (core/verdict.py)
    reason: str  # why exactness or an approximation is expected
    rel_error: str  # formatted numbers of the worst leaf
    cosine: str
    cosine_floor: float
    scale: str = ""  # "2.00x BPTT's, same direction" when the online gradient is a multiple of BPTT's
    why_scaled: str = ""  # what such a multiple usually means
    explained_by: str = ""  # "ETL005 on line 13": the finding that says why the weight does not learn
    draws: str = ""  # the worst leaf's cosine on each input draw: "-0.99, -0.97 and -0.96 on 3 input draws"
    online_without_bptt: str = ""  # "1.46": the online gradient's norm where BPTT's is exactly zero

    @property
    def subject(self) -> str:
        return f"{self.weight}{self.leaves}"


@dataclass(frozen=True)
class ProbeFacts:
    """What the learning-signal probe measured for one weight (or why its step raised), for a
    probe rule to word. Numbers are already formatted; an unmeasured one reads "n/a"."""

    algorithm: str
    weight: str = ""  # the weight as the code names it, with its leaf ("conv.weight['bias']")
    steps: int = 0
    bptt_norm: str = ""
    zero: str = ""  # how zero the online gradient is: "exactly zero", "zero up to float32 rounding (norm 3e-09)"
    scale: str = ""  # "2.00x BPTT's, same direction"
    why_scaled: str = ""
    exception: str = ""  # the failed step's exception class
    text: str = ""  # its text, one line, paths by name
    parameter_shape: str = ""  # a shape mismatch: the parameter's shape and its gradient's
    gradient_shape: str = ""
    same_size: bool = True  # the gradient has as many elements as the parameter (a reshape would fit it)
    static: str = ""  # what the static evidence it replaces said: "the compiler connects it to V (ETL001)"
    draws: str = ""  # a direction: the cosine with BPTT's on each input draw, "-0.99, -0.97 and -0.96 on 3 input draws"
    weight_draws: str = ""  # a leaf's direction: its whole weight's cosine with BPTT's on each of those draws
    deviation: str = ""  # at the first step: "0.12x BPTT's norm, cosine 0.22"
    # where the first step's figures were measured: from rest, or from the states warm-up steps leave
    first_step: str = "the first step"
    other_draws: str = ""  # a zero on the first draw only: "0.31x BPTT's norm on 1 other input draw"
    share: str = ""  # a weight one use of which gets nothing, learning through others: "0.45x BPTT's norm"
    # a weight whose online gradient is zero over the sequence and not at the first step: that step's,
    # "1x BPTT's norm on 2 of 4 input draws"
    same_step: str = ""


@dataclass(frozen=True)
class UnusedSuppression:
    """A suppression comment that matched nothing, for ETL301 to word."""

    idle: tuple[str, ...]  # codes of rules that ran and reported nothing there
    unknown: tuple[str, ...]  # codes that name no rule
    form: str  # "noqa", "file-ignore", ...


class Place(Protocol):
    """A place in the user's code as an exception rule's ``describe`` returns it (the analysis's
    ``SourceFrame``)."""

    @property
    def path(self) -> str: ...

    @property
    def line(self) -> int: ...

    @property
    def column(self) -> int: ...


class SourceTexts(Protocol):
    """What a fix reads of the user's files: each file's text as this run sees it (the fixes'
    ``Sources``: the file on disk, or an editor's unsaved buffer)."""

    def text(self, path: str) -> str | None: ...


# (finding, the user's files) -> the mechanical edit, or None
Fixer = Callable[[Finding, SourceTexts], Fix | None]


class Fixable(ABC):
    """A violation that knows its mechanical fix (ruff's violation with its ``fix``): mixed into the
    violation's dataclass, beside :class:`~.details.Violation`."""

    @abstractmethod
    def fix(self, finding: Finding, sources: SourceTexts) -> Fix | None:
        """The edit that mends ``finding`` (this violation, placed in the user's file), or None where the
        source does not have the shape the fix knows."""


@dataclass(frozen=True)
class Blocker:
    """What keeps the weight of a rule's finding from learning, as the learning graph draws it: the place
    of the finding's related location labelled ``at`` (the finding's own line when ``at`` is empty),
    shown as ``shown`` ("mean subtracted")."""

    shown: str
    at: str = ""


# the route a finding shows in the user's code (SARIF codeFlows), which the analysis finds (analysis/flows.py):
# "weight": from where the weight is created, through its op, to the hidden states it reaches; "": none
Route = Literal["", "weight"]

# The callables a rule offers. Their first parameters are records of the stages above the core (the
# analysis's AnalysisContext and Compilation), which the core must not import: they are typed Any
# here, and the rule's own function names them.
Describe = Callable[[BaseException, Any], tuple[str, Place | None]]  # (exception, Compilation) -> message, place


@dataclass(frozen=True, kw_only=True)
class Rule:
    """What every rule is, as plain data: its metadata, read by the CLI, the documentation site, SARIF
    and the language server. A rule file defines one of the kinds below; the engine tells them apart
    by their type (``isinstance``), never by which optional field is set.
    """

    id: str
    name: str
    level: Level
    summary: str
    tags: tuple[str, ...] = ()
    # a finding of this rule that names a weight says how that weight reaches (or fails to reach) a
    # hidden state; False when it names weights for another reason (it connects them, or lists
    # every weight on the output path): our own rules still look at such a weight, and --verify
    # does not point at such a finding to say why the weight does not learn
    explains_weight: bool = True
    # ids of rules whose findings about the same weight this rule's finding replaces: one verdict per
    # weight, the stronger evidence deciding it (a zero eligibility trace over the compiler's relation,
    # a measured zero gradient over either)
    supersedes: tuple[str, ...] = ()
    # a finding of this rule says, from the graph alone, that the weight's online gradient is zero; where
    # no measurement of this run backs it (the probe's or --verify's), its message says so and how to
    # measure it (engine/evidence.py)
    claims_zero_gradient: bool = False
    # what a finding of this rule says of the online learning of the weight it names (or, naming none, of
    # the model's weights): ZERO for a rule that denies the weight any online gradient, LEARNS for one that
    # says it learns, ...; None when it says nothing of it (a note on the graph's shape, a tool's failure).
    # The learning graph's verdicts, ``check(...).weights()`` and the tests' referee all read it. A
    # denial counts at warning and error only: a rule that words a doubt as a note does not deny
    says: WeightVerdict | None = None
    # what keeps the weight from learning, for the learning graph to draw, when the finding's op does not
    # show it (a plain op does; a mean-subtracting op at a related location does not)
    blocker: Blocker | None = None
    # the weight's value reaches the step's output and no hidden state: the graph draws it into the output
    output_only: bool = False
    enabled: bool = True  # on by default
    opt_in_flag: str = ""  # a rule whose cost asks for an explicit flag
    precision: str = "high"
    retired: bool = False
    docs: str = ""  # the Markdown beside the rule file, filled in by the registry

    def section(self, title: str) -> str:
        return doc_sections(self.docs).get(title, "")

    @property
    def full_description(self) -> str:
        return self.section("What it does") or self.summary

    @property
    def record_kinds(self) -> tuple[str, ...]:
        """The braintrace DiagnosticKind values this rule reports (none but a record rule's)."""
        return ()

    @property
    def measured(self) -> bool:
        """Its finding reports what this run measured of the model's own online gradient (the probe,
        ``--verify``), not what the graph shows; the advisor's measures of other algorithms are advice."""
        return isinstance(self, MeasuredRule) and not {"probe", "verify"}.isdisjoint(self.tags)


@dataclass(frozen=True, kw_only=True)
class RecordRule(Rule):
    """Reports records of braintrace's compiler: those of its ``kinds`` (at its ``record_levels``)."""

    kinds: tuple[str, ...] = ()  # braintrace DiagnosticKind values reported by this rule (none: ETL099's fallback)
    # the braintrace levels of its kinds this rule takes (empty: every level), when the compiler grades one
    # kind two ways that mean different things for the weight
    record_levels: tuple[str, ...] = ()
    # the message a modeller reads (braintrace's own text is kept in the finding's details; without it the
    # record's text is shown, paths by name)
    explain: Callable[[RecordFacts], str] | None = None
    # for records that name no equation: the control-flow primitive ("cond", "scan", "while") whose
    # equations they are about, in the order they are reported; records of one ``ordinal_group``
    # (default: their kind) share that count
    control_flow: str = ""
    ordinal_group: str = ""
    flow: Route = ""

    @property
    def record_kinds(self) -> tuple[str, ...]:
        return self.kinds


@dataclass(frozen=True, kw_only=True)
class ErrorRule(Rule):
    """Reports an exception raised while the step was traced or compiled, recognised by ``error``."""

    error: ErrorMatch
    # when the exception's own text is not the best thing to show: the message and where to show it
    describe: Describe | None = None
    # the message once the finding is placed; the compiler's primitive is then kept in the finding's subject
    explain_error: Callable[[ErrorFacts], str] | None = None


@dataclass(frozen=True, kw_only=True)
class RecordErrorRule(RecordRule, ErrorRule):
    """Reports the compiler's ERROR record of a refusal and the exception that follows it, as one finding."""


@dataclass(frozen=True, kw_only=True)
class AnalysisRule(Rule, Generic[V]):
    """A rule of our own: its ``check`` reads the analysis context and yields :class:`Hit` records, each
    carrying one of the rule's ``violations`` (the registry registers them for the cache)."""

    violations: tuple[type[V], ...]
    check: Callable[[Any], Iterable[Hit[V]]]  # (AnalysisContext) -> hits
    flow: Route = ""


@dataclass(frozen=True, kw_only=True)
class MeasuredRule(Rule, Generic[FactsT]):
    """Reports what --verify, the learning-signal probe or the advisor measured, worded by ``explain``
    from the measurer's facts (:class:`GradientFacts`, :class:`ProbeFacts`, the advisor's)."""

    explain: Callable[[FactsT], str] | None = None
    # --verify: the verdicts of the gradient comparison this rule reports, by their value ("wrong",
    # "not-learning", ...; see core/verdict.py)
    verdicts: tuple[str, ...] = ()
    # a measured finding that only confirms a static warning or error about the same weight (one whose
    # rule explains the weight, such as ETL005 or ETL201) is folded into that finding as its
    # ``measured`` property, so the weight keeps one finding, with the static rule's advice
    folds_into_static: bool = False
    # folded so, it measured the weight learning where the static finding says a use of it gets nothing: that
    # finding then says the weight learns partly, and gets nothing through that use only
    learns_partly: bool = False
    # the probe: its figure is the first step's (where braintrace's online gradient must be BPTT's), not the whole
    # run's, so the finding's ``steps`` is 1
    at_first_step: bool = False
    # the probe: its finding is a direction against BPTT's, its facts' ``draws`` the cosine on each draw (over the
    # sequence, or at the first step where only the first step points against BPTT's)
    direction: bool = False


@dataclass(frozen=True, kw_only=True)
class SuppressionRule(Rule):
    """Reports a suppression comment that matched nothing (the policy layer finds them)."""

    explain: Callable[[UnusedSuppression], str]
    fix: Fixer | None = None


AnyRule = RecordRule | ErrorRule | AnalysisRule[Any] | MeasuredRule[Any] | SuppressionRule


def rule_has_fix(rule: Rule) -> bool:
    """Whether a rule's findings may come with a fix: a violation of the rule's is :class:`Fixable`, or
    the suppression rule offers one."""
    if isinstance(rule, AnalysisRule):
        return any(issubclass(violation, Fixable) for violation in rule.violations)
    return isinstance(rule, SuppressionRule) and rule.fix is not None


def finding_fixer(finding: Finding, rule: Rule | None) -> Fixer | None:
    """The fix a finding offers: its violation's, or for an unused suppression the rule's."""
    if isinstance(finding.details, Fixable):
        return finding.details.fix
    return rule.fix if isinstance(rule, SuppressionRule) else None


def rule_flow(rule: Rule) -> Route:
    """How a rule's finding finds its route in the user's code, if its kind has one."""
    return rule.flow if isinstance(rule, RecordRule | AnalysisRule) else ""


# where the documentation site is published (mkdocs.yml's site_url); ``docs-url`` points elsewhere
DOCS_URL = "https://etrace-lint.github.io/etrace-lint/"


def rule_page_path(rule_id: str) -> str:
    """The rule's page in the documentation site, relative to its root: ``rules/etl208/``."""
    return f"rules/{rule_id.lower()}/"


def rule_page_url(rule_id: str, docs_url: str = DOCS_URL) -> str:
    """The rule's page on the documentation site published at ``docs_url``: SARIF's ``helpUri`` and the
    language server's ``codeDescription.href``."""
    return f"{docs_url.rstrip('/')}/{rule_page_path(rule_id)}"


def doc_sections(markdown: str) -> dict[str, str]:
    """Split a rule's Markdown into its ``## Title`` sections."""
    sections: dict[str, str] = {}
    current = None
    lines: list[str] = []
    for line in markdown.splitlines():
        heading = re.match(r"^##\s+(.*?)\s*$", line)
        if heading:
            if current is not None:
                sections[current] = "\n".join(lines).strip()
            current, lines = heading.group(1), []
        elif current is not None:
            lines.append(line)
    if current is not None:
        sections[current] = "\n".join(lines).strip()
    return sections
