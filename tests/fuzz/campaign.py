"""A campaign: generated models, the oracle and the lint per model, compared weight by weight.

The oracle and the lint each run in worker processes of their own (``python -m tests.fuzz serve oracle`` /
``serve lint``), one file per request; a job (``-j``) holds one of each. A table records every model's
spec, both answers and each weight's comparison; tables of the shards of one campaign merge into one.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from etrace_lint.core.weight_verdict import WeightVerdict

from .generator import LIBRARY_CELLS, ModelSpec, model_specs, write

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ANSWER = "@@fuzz "  # the worker's answer line, apart from anything a model prints
RESTART_AFTER = 30  # requests a worker serves before a fresh one replaces it
# XLA compiles without optimising on both sides (as tests/test_real_models.py's --verify run and the
# referee do): it changes float32 rounding, never a verdict, and compiling is most of what a model costs
WORKER_ENV = {"ETRACE_LINT_NO_DAEMON": "1", "JAX_DISABLE_MOST_OPTIMIZATIONS": "1", "JAX_PLATFORMS": "cpu"}

# what the lint may say of a weight, for each verdict the oracle measured: a claim in the same words, or
# one that says as much (a multiple or a missing path are both "not BPTT's gradient at T=1")
ACCEPTED = {
    WeightVerdict.LEARNS: {WeightVerdict.LEARNS, WeightVerdict.WITHIN_WINDOW},
    WeightVerdict.APPROXIMATE: {WeightVerdict.APPROXIMATE, WeightVerdict.PARTLY},
    WeightVerdict.PARTLY: {WeightVerdict.PARTLY, WeightVerdict.APPROXIMATE},
    WeightVerdict.MULTIPLE: {WeightVerdict.MULTIPLE, WeightVerdict.APPROXIMATE},
    WeightVerdict.ZERO: {WeightVerdict.ZERO},
    WeightVerdict.AGAINST: {WeightVerdict.AGAINST},
    WeightVerdict.NOT_FINITE: {WeightVerdict.NOT_FINITE},
    WeightVerdict.REFUSED: {WeightVerdict.REFUSED, WeightVerdict.ZERO},
    WeightVerdict.STEP_RAISES: {WeightVerdict.STEP_RAISES, WeightVerdict.REFUSED, WeightVerdict.ZERO},
}
# a weight the oracle found not learning, about which the lint says nothing: a disagreement too
SILENT_ABOUT = {WeightVerdict.ZERO, WeightVerdict.NOT_FINITE, WeightVerdict.REFUSED, WeightVerdict.STEP_RAISES}

MODEL_LEVEL = {WeightVerdict.REFUSED, WeightVerdict.STEP_RAISES}

# the linter's texts before its verdicts were WeightVerdict's values
_OLD_TEXTS = {"same-step only": WeightVerdict.LEARNS, "wrong online gradient": WeightVerdict.APPROXIMATE,
              "no verdict": WeightVerdict.NOT_MEASURED}


def lint_verdict(text: str) -> WeightVerdict:
    """The lint's verdict text as a WeightVerdict (its older texts mapped to the words they meant)."""
    return _OLD_TEXTS.get(text) or WeightVerdict(text)


def versions() -> dict[str, str]:
    """The line a table was judged on: the versions of Python, braintrace, JAX and hypothesis, the linter's own
    code (:func:`linter_fingerprint`) and the campaign's (:func:`oracle_fingerprint`), so that shards run in
    other sessions or on other machines merge only where the same linter and the same referee judged them."""
    import braintrace
    import hypothesis
    import jax

    return {"python": platform.python_version(), "braintrace": braintrace.__version__, "jax": jax.__version__,
            "hypothesis": hypothesis.__version__, "linter": linter_fingerprint(), "oracle": oracle_fingerprint()}


def linter_fingerprint() -> str:
    """The first 12 hex digits of a SHA-256 over the source of every module of ``etrace_lint`` and ``rules``
    this process imports (path and text): the same on every clone of one commit, another where the code that
    gives a verdict changed (documentation and tests do not count)."""
    import etrace_lint
    import rules

    return _fingerprint(os.path.dirname(os.path.abspath(package.__file__ or "")) for package in (etrace_lint, rules))


def oracle_fingerprint() -> str:
    """As :func:`linter_fingerprint`, over the campaign's own code: the generator, the oracle, the comparison
    (this package) and the referee's pieces the oracle runs (``tests/online_referee.py``)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return _fingerprint([here, os.path.join(os.path.dirname(here), "online_referee.py")])


def _fingerprint(places: Iterable[str]) -> str:
    import hashlib

    digest = hashlib.sha256()
    for top in places:
        found = [top] if os.path.isfile(top) else sorted(
            os.path.join(folder, name) for folder, dirs, files in os.walk(top)
            if "__pycache__" not in folder.split(os.sep) for name in files)
        for path in sorted(found):
            if path.endswith(".py"):
                digest.update(os.path.relpath(path, os.path.dirname(top)).encode())
                with open(path, "rb") as handle:
                    digest.update(handle.read())
    return digest.hexdigest()[:12]


# ------------------------------------------------------------------ drawing specs


def draw_specs(count: int, seed: int) -> list[ModelSpec]:
    """``count`` specs drawn by hypothesis from ``seed``: the same list on every machine of one version."""
    found: list[ModelSpec] = []

    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(model_specs())
    def collect(spec: ModelSpec) -> None:
        if len(found) < count:
            found.append(spec)

    hypothesis_seed(seed)(collect)()
    return found


# ------------------------------------------------------------------ workers


class Worker:
    """One ``python -m tests.fuzz serve KIND`` process: a file path in, one JSON record out."""

    def __init__(self, kind: str):
        self.kind = kind
        self.process: subprocess.Popen[str] | None = None
        self.served = 0
        self.lock = threading.Lock()

    def _start(self) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "tests.fuzz", "serve", self.kind], cwd=REPO, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env={**os.environ, **WORKER_ENV})

    def ask(self, path: str, again: dict[str, list[str]] | None = None) -> dict[str, Any]:
        """The worker's answer for ``path``; ``again`` (``{"short": [...], "zeros": [...], "against": [...]}``):
        the oracle looks again at the weights a lint disputes instead (:func:`~tests.fuzz.oracle.look_again`)."""
        with self.lock:
            if self.process is None or self.served >= RESTART_AFTER or self.process.poll() is not None:
                self.close()
                self.process, self.served = self._start(), 0
            self.served += 1
            assert self.process.stdin is not None and self.process.stdout is not None
            self.process.stdin.write(path + ("\t" + json.dumps(again) if again else "") + "\n")
            self.process.stdin.flush()
            for line in self.process.stdout:
                if line.startswith(ANSWER):
                    return dict(json.loads(line[len(ANSWER):]))
            self.process = None
            return {"file": os.path.basename(path), "crash": f"the {self.kind} worker ended"}

    def cpu(self) -> float:
        """CPU seconds of the running process (Linux), 0 where unknown."""
        if self.process is None or self.process.poll() is not None:
            return 0.0
        try:
            with open(f"/proc/{self.process.pid}/stat", encoding="ascii") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return 0.0

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process = None


# the lint worker of a campaign that judges --verify's verdicts instead of the default run's, and its oracle: each
# judges the claims over the length of sequence they are about (the probe's 4 steps, --verify's 16)
ORACLE, VERIFY_ORACLE, LINT, VERIFY_LINT = "oracle", "oracle-verify", "lint", "lint-verify"


def verify_steps() -> int:
    """The sequence a ``--verify`` run measures, unless a target says otherwise."""
    from etrace_lint.verify.settings import VerifySettings

    return VerifySettings().steps


def serve(kind: str) -> None:
    """The worker's loop: one path per line on stdin, one answer line per path on stdout (a path with the
    weights a lint disputes, after a tab: the oracle's second look at them). An oracle never imports the linter's
    side, nor a lint worker the oracle's."""
    for line in sys.stdin:
        path, _, disputed = line.strip().partition("\t")
        if path:
            oracle = kind in (ORACLE, VERIFY_ORACLE)
            record = _oracle_answer(kind, path, disputed) if oracle else _lint_answer(kind, path)
            sys.stdout.write(ANSWER + json.dumps(record) + "\n")
            sys.stdout.flush()


def _oracle_answer(kind: str, path: str, disputed: str) -> dict[str, Any]:
    from .oracle import STEPS, judge_files, look_again

    steps = verify_steps() if kind == VERIFY_ORACLE else STEPS
    if disputed:
        again = json.loads(disputed)
        return look_again(path, again["short"], again["zeros"], steps=steps, against=again.get("against", []))
    return judge_files([path], steps=steps)[0]


def _lint_answer(kind: str, path: str) -> dict[str, Any]:
    from .lint_side import lint_files

    return lint_files([path], verify=kind == VERIFY_LINT)[0]


# ------------------------------------------------------------------ comparing


def weight_role(spec: ModelSpec, weight: str) -> str:
    """What a weight is in the model, in the generator's words: the mechanism's name in the table."""
    head = weight.split(".", 1)[0]
    if head == "gain":
        return "input gain written in the step (plain *)"
    if head.startswith("ro_") or head == "readout":
        return f"readout ({spec.readout})"
    layer = spec.layers[int(head[1:].split("_", 1)[0])]
    part = head.split("_", 1)[1]
    if part == "cell":  # braintrace.nn's own cell: which of its weights (its Linear's name)
        return f"{weight.split('.')[1] if '.' in weight else 'weight'} of braintrace.nn.{LIBRARY_CELLS[layer.cell]}"
    where = f"{layer.cell} cell" + (f", {layer.wrap}" if layer.wrap != "none" else "")
    if part == "norm":
        return f"{layer.norm} norm's scale after {layer.op} in {where}"
    if part == "tau":
        return f"{layer.leak} leak in {where}"
    extras = [f"then {layer.norm} norm"] * (layer.norm != "none") + ["dropout"] * layer.dropout
    return f"{layer.op} in {where}" + (f" ({', '.join(extras)})" if extras else "")


def _short_over_the_sequence(truth: WeightVerdict, said: WeightVerdict, measured: dict[str, Any]) -> bool:
    """The lint's "learns partly" or "learns approximately" for a weight exact at T=1 whose gradient over a
    sequence the oracle ran (after warm-up, or from rest) is not BPTT's: a path the trace does not follow (a plain
    op on the recurrence, a state the compiler does not carry, a mean subtracted before the state) is missing from
    the later steps only, and it shows only where that path carries gradient. From moved states a batch norm over
    a batch of 2, or a layer not yet spiking, can carry none, while from rest the same weight misses a fifth of
    BPTT's. The oracle's other draws count too (``short``: :func:`second_look`), and so does the draw that refuted
    a zero of its first draws (``refuting``: seed 101's model 102, an RMS norm's scale no input drove at T=1, 0.008x
    BPTT's over the sequence on the fifth draw). Where every sequence's gradient is BPTT's, on every draw, the claim
    is untrue and the two disagree."""
    from .oracle import short_over_the_sequence as short  # the oracle imports JAX: a merge of tables does not

    others = (measured, measured.get("short") or {}, measured.get("refuting") or {})
    return (truth is WeightVerdict.LEARNS and said in (WeightVerdict.PARTLY, WeightVerdict.APPROXIMATE)
            and any(short(figures.get(key)) for figures in others for key in ("tk", "rest")))


def _looks_again(row: dict[str, Any]) -> bool:
    """A disagreement a sequence on another draw may settle: the lint says a part is missing where the
    oracle's first draw found every sequence exact."""
    return (not row["agree"] and row["oracle"] == WeightVerdict.LEARNS.value
            and row["lint"] in (WeightVerdict.PARTLY.value, WeightVerdict.APPROXIMATE.value))


def _zero_disputed(row: dict[str, Any]) -> bool:
    """A disagreement more draws of the oracle may settle: it found the weight not learning on each of its draws,
    and the lint does not say so (it measured it learning on a draw of its own, or claims nothing)."""
    return not row["agree"] and row["oracle"] == WeightVerdict.ZERO.value


def _against_disputed(row: dict[str, Any]) -> bool:
    """The same of a weight the oracle found learning against BPTT on each of its draws: the lint may have
    measured a draw on which it does not."""
    return not row["agree"] and row["oracle"] == WeightVerdict.AGAINST.value


def second_look(oracle: dict[str, Any], looked: dict[str, Any]) -> dict[str, Any]:
    """The oracle's record with what it measured on its other draws (:func:`~tests.fuzz.oracle.look_again`): each
    weight found short there keeps that draw's figures as ``short``; a zero a later draw refutes takes that draw's
    verdict, as :func:`~tests.fuzz.oracle.judge_directions` does on its own draws."""
    weights = dict(oracle.get("weights", {}))
    for weight, figures in looked.get("short", {}).items():
        if weight in weights:
            weights[weight] = {**weights[weight], "short": figures}
    for weight, figures in looked.get("refuted", {}).items():
        if weight in weights:
            weights[weight] = {**weights[weight], "verdict": figures["verdict"], "refuted_on_seed": figures["seed"],
                               "refuting": {key: figures.get(key) for key in ("t1", "tk", "rest")}}
    return {**oracle, "weights": weights, "looked_again": looked.get("draws", 0),
            "zero_draws": looked.get("zero_draws", 0)}


def _orthogonal_against(truth: WeightVerdict, said: WeightVerdict, over_k: dict[str, Any] | None) -> bool:
    """The lint's "learns against BPTT" for a weight whose gradient over the oracle's sequence is as good as
    orthogonal to BPTT's, a little below 0: the lint measured its direction below 0 on each of its own draws.
    Whether the oracle's first step was exact ("learns") or not ("approximately", seed 47's model 842: cosine
    -0.04 over the sequence, -0.10 from rest), the sequence's direction is what "against" speaks of."""
    from .oracle import marginal

    return ((truth.learns or truth is WeightVerdict.APPROXIMATE) and said is WeightVerdict.AGAINST
            and marginal(over_k))


def compare(spec: ModelSpec, oracle: dict[str, Any], lint: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per weight the oracle judged: both verdicts and whether they agree."""
    claimed = next(iter(lint.get("weights", {}).values()), {})
    rows = []
    for weight, measured in oracle.get("weights", {}).items():
        truth = WeightVerdict(measured["verdict"])
        said = lint_verdict(claimed[weight]) if weight in claimed else WeightVerdict.NOT_MEASURED
        if "crash" in lint:
            agree = False
        elif truth is WeightVerdict.NOT_MEASURED:
            agree = True
        elif said is WeightVerdict.NOT_MEASURED:
            # a model-level error (the step raises, the learner is refused) speaks for every weight
            agree = truth not in SILENT_ABOUT or (truth in MODEL_LEVEL and bool(lint.get("model_errors")))
        else:
            agree = (said in ACCEPTED[truth] or _short_over_the_sequence(truth, said, measured)
                     or _orthogonal_against(truth, said, measured.get("tk")))
        rows.append({"weight": weight, "oracle": truth.value, "lint": said.value, "agree": agree,
                     "role": weight_role(spec, weight), "rules": lint.get("rules", {}).get(weight, []),
                     "t1": measured.get("t1"), "tk": measured.get("tk")})
    return rows


def mechanism(row: dict[str, Any]) -> str:
    return f"lint {row['lint']!r} / braintrace {row['oracle']!r}: {row['role']}"


# ------------------------------------------------------------------ a campaign


@dataclass(frozen=True)
class Shard:
    index: int = 1
    count: int = 1

    @staticmethod
    def parse(text: str) -> Shard:
        index, count = (int(part) for part in text.split("/"))
        if not 1 <= index <= count:
            raise ValueError(f"--shard {text}: i/n with 1 <= i <= n")
        return Shard(index, count)


def judge_one(spec: ModelSpec, folder: str, name: str, oracle: Worker, lint: Worker) -> dict[str, Any]:
    path = write(spec, folder, name)
    truth = oracle.ask(path)
    model: dict[str, Any] = {"name": name, "spec": spec.to_json(), "oracle": truth}
    if truth.get("status") != "ok":
        return {**model, "rejected": truth.get("reason") or truth.get("crash", "")}
    said = lint.ask(path)
    rows = compare(spec, truth, said)
    short = [row["weight"] for row in rows if _looks_again(row)]
    zeros = [row["weight"] for row in rows if _zero_disputed(row)]
    against = [row["weight"] for row in rows if _against_disputed(row)]
    if short or zeros or against:  # a claim measured on few draws is settled on the oracle's others: only where
        # they disagree
        truth = second_look(truth, oracle.ask(path, {"short": short, "zeros": zeros, "against": against}))
        model["oracle"] = truth
        rows = compare(spec, truth, said)
    return {**model, "lint": said, "rows": rows}


def model_name(seed: int, number: int) -> str:
    return f"fuzz_{seed}_{number:05d}"


def resumable(table: dict[str, Any], count: int, seed: int, shard: Shard, verify: bool = False) -> str:
    """Why ``table`` cannot be resumed as this shard of this campaign on this line, or "" where it can."""
    meta = table.get("meta", {})
    wanted = {"seed": seed, "count": count, "shards": [shard.index], "shard_count": shard.count,
              "versions": versions(), "verify": verify}
    for key, value in wanted.items():
        if meta.get(key) != value:
            return f"its {key} is {meta.get(key)}, this run's {value}"
    return ""


def run(count: int, seed: int, jobs: int, shard: Shard, folder: str | None = None,
        progress: Callable[[str], None] = lambda line: None,
        partial: Callable[[dict[str, Any]], None] = lambda table: None,
        resume: dict[str, Any] | None = None, verify: bool = False) -> dict[str, Any]:
    """The shard's part of a campaign of ``count`` models drawn from ``seed``: its table (``partial`` gets the
    table of the models judged so far after each one, so that a campaign stopped early keeps them).
    ``resume``, a table of this shard stopped early (:func:`resumable`), keeps its models, judges only the rest
    and adds its CPU and wall seconds to this run's. ``verify``: the lint's verdicts are a ``--verify`` run's."""
    specs = list(enumerate(draw_specs(count, seed)))[shard.index - 1::shard.count]
    folder = folder or tempfile.mkdtemp(prefix="etrace-lint-fuzz-")
    os.makedirs(folder, exist_ok=True)
    kept = {model["name"]: model for model in (resume or {}).get("models", [])}
    before = (resume or {}).get("meta", {})
    models: list[dict[str, Any]] = [kept.get(model_name(seed, number), {}) for number, _ in specs]
    queue = [slot for slot, model in enumerate(models) if not model]
    workers = [(Worker(VERIFY_ORACLE if verify else ORACLE), Worker(VERIFY_LINT if verify else LINT))
               for _ in range(max(1, min(jobs, len(queue))))]
    started, cpu = time.monotonic(), _children_cpu()
    lock = threading.Lock()

    def job(pair: tuple[Worker, Worker]) -> None:
        while True:
            with lock:
                if not queue:
                    return
                slot = queue.pop(0)
            number, spec = specs[slot]
            models[slot] = judge_one(spec, folder, model_name(seed, number), *pair)
            progress(_line(models[slot]))
            with lock:
                partial(table([model for model in models if model]))

    def table(judged: list[dict[str, Any]]) -> dict[str, Any]:
        # CPU seconds of the workers that have ended, and of those still running (read from /proc)
        meta = {"seed": seed, "count": count, "shards": [shard.index], "shard_count": shard.count,
                "versions": found_versions, "verify": verify, "jobs": len(workers),
                "wall_s": round(before.get("wall_s", 0) + time.monotonic() - started, 1),
                "cpu_s": round(before.get("cpu_s", 0) + _children_cpu() - cpu
                               + sum(w.cpu() for pair in workers for w in pair), 1),
                "complete": len(judged) == len(specs)}
        return {"meta": meta, "models": judged}

    found_versions = versions()
    try:
        with ThreadPoolExecutor(len(workers)) as pool:
            list(pool.map(job, workers))
    finally:
        for pair in workers:
            for worker in pair:
                worker.close()
    return table(models)


def _children_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system


def _line(model: dict[str, Any]) -> str:
    if "rejected" in model:
        return f"{model['name']}: rejected ({model['rejected'][:100]})"
    wrong = [row for row in model["rows"] if not row["agree"]]
    return f"{model['name']}: {len(model['rows'])} weights, {len(wrong)} disagree" + \
        "".join(f"\n    {row['weight']}: {mechanism(row)}" for row in wrong)


def merge(tables: list[dict[str, Any]]) -> dict[str, Any]:
    """One table from the shards of one campaign: same seed, count, shard count and versions, no shard twice."""
    if not tables:
        raise ValueError("nothing to merge")
    first = tables[0]["meta"]
    for table in tables[1:]:
        meta = table["meta"]
        for key in ("seed", "count", "shard_count", "versions", "verify"):
            if meta.get(key, False) != first.get(key, False):
                raise ValueError(f"the tables differ in {key}: {first.get(key)} and {meta.get(key)}; a merge takes the "
                                 f"shards of one campaign, on one line of versions")
    shards = [index for table in tables for index in table["meta"]["shards"]]
    if len(set(shards)) != len(shards):
        raise ValueError(f"a shard is given twice: {sorted(shards)}")
    meta = {**first, "shards": sorted(shards), "jobs": sum(t["meta"]["jobs"] for t in tables),
            "wall_s": max(t["meta"]["wall_s"] for t in tables), "cpu_s": sum(t["meta"]["cpu_s"] for t in tables)}
    return {"meta": meta, "models": [model for table in tables for model in table["models"]]}


def reassessed(table: dict[str, Any]) -> dict[str, Any]:
    """The table with every row compared again from the answers it records (after ``ACCEPTED`` changed)."""
    models = [{**model, "rows": compare(ModelSpec.from_json(model["spec"]), model["oracle"], model["lint"])}
              if "lint" in model else model for model in table["models"]]
    return {**table, "models": models}


def summary(table: dict[str, Any]) -> dict[str, Any]:
    """Counts per verdict on each side, the disagreements grouped by mechanism, throughput."""
    table = reassessed(table)
    models = table["models"]
    judged = [m for m in models if "rows" in m]
    rows = [row for m in judged for row in m["rows"]]
    wrong = Counter(mechanism(row) for row in rows if not row["agree"])
    examples: dict[str, str] = {}
    for model in judged:
        for row in model["rows"]:
            if not row["agree"]:
                examples.setdefault(mechanism(row), f"{model['name']} {row['weight']}")
    meta = table["meta"]
    minutes = meta["cpu_s"] / 60 if meta["cpu_s"] else 0
    return {"models": len(models), "judged": len(judged), "rejected": len(models) - len(judged),
            "weights": len(rows), "agree": sum(row["agree"] for row in rows),
            "oracle": dict(Counter(row["oracle"] for row in rows).most_common()),
            "lint": dict(Counter(row["lint"] for row in rows).most_common()),
            "pairs": dict(Counter(f"{row['lint']} / {row['oracle']}" for row in rows).most_common()),
            "disagreements": {key: {"count": n, "first": examples[key]} for key, n in wrong.most_common()},
            "models_per_cpu_minute": round(len(models) / minutes, 2) if minutes else None,
            "versions": meta["versions"], "seed": meta["seed"]}


def markdown(figures: dict[str, Any]) -> str:
    """A summary as the docs page's tables: the line, counts per verdict on both sides, the disagreements."""
    line = figures["versions"]
    linter = "".join(f", {key} {line[key]}" for key in ("linter", "oracle") if key in line)
    head = (f"Python {line['python']}, braintrace {line['braintrace']}, JAX {line['jax']}{linter}, "
            f"seed {figures['seed']}: "
            f"{figures['models']} models ({figures['rejected']} rejected as not running), {figures['weights']} "
            f"weights, {figures['agree']} agreeing; {figures['models_per_cpu_minute']} models per CPU minute.")
    verdicts = [verdict.value for verdict in WeightVerdict]
    rows = ["| verdict | braintrace (oracle) | etrace-lint |", "|---|---|---|"]
    rows += [f"| {v} | {figures['oracle'].get(v, 0)} | {figures['lint'].get(v, 0)} |" for v in verdicts
             if figures["oracle"].get(v) or figures["lint"].get(v)]
    wrong = ["| disagreement (lint / braintrace: the weight) | weights | first |", "|---|---|---|"]
    wrong += [f"| {key} | {value['count']} | {value['first']} |" for key, value in figures["disagreements"].items()]
    return "\n".join([head, "", *rows, "", *(wrong if figures["disagreements"] else ["No disagreement."])])
