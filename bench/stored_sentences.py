"""Issue 53: how many sentences does a result document hold that run/ or results/ wrote
into it? Counts, for whichever compilegate is on sys.path:

    recommendation   every string of each step's `recommendation` (its `text`, `withheld`,
                     …) but the speedup's `estimator` (payoff.py's description of how the
                     speedup was estimated: counted apart, outside items 3 and 4)
    run_health       every item of `run_health.unsteady`
    unsteady_times   every item of a step's mark when `baseline update` records the result
                     (gate/baseline.py writes it, from the result's run health)

    estimator        the speedup's `estimator` in each payoff and recommendation
    method           every ratio's `method` (results/stats.py: speedup, A/A, yardstick; a
                     variant's and eager's)
    degraded         every item of a variant's `degraded` that results/ wrote (the child's
                     own reasons are the child's: not counted)
    error            every `error` of a failed step or variant (run/: the failure in words
                     before issue 53; since, only text that is not compilegate's)
    failure          every string of a `failure` record but the child's progress message and
                     last line (`doing`, `last_output`: the child's, not run/'s)

and the child's own (since issue 53's last items), each string with a space it writes:

    step_work.absent       why a count was not taken (a CPU's counts, a torch without
                           Dynamo events, a recompiled iteration, a failed pass)
    instructions_absent    why the compile's instructions were not counted
    artifacts_absent       why no cache artifacts were saved (no Inductor cache directory)
    numerics.reason        why a numerics check reached no verdict (numerics.steps 0; the
                           copies raised: that exception's text is not ours, counted apart)
    diagnostics failed     the note of a diagnostics pass that raised
    degraded, fallbacks    the child's notes on a compile that degraded and its fallback
                           reasons: those its build_report writes of the recorded PyTorch
                           snapshots (tests/unit/data/graph_breaks_*.json), and, where its
                           child still composes them (before issue 53's last items), the
                           notes written again from each real document's diagnostics facts
                           and each fallback reason those documents recorded

and (issue 53's last items) the sentences it still wrote at 448dcbd:

    limit_message          the recompile limit's note (recompiles.limit_message) build_report
                           writes of the snapshots above and tests/unit/data/recompiles_*.json
                           (2.13's limit warning, 2.4's recompiles no log explains)
    recompile reasons      each recompile event's reason of those snapshots that is not
                           torch's (torch's own, found in its log records or compilation
                           metrics, counted apart)
    numerics verdict       the reason, reference_error and reference_disagreement of the
                           numerics check_numerics records of two steps run here with Dynamo
                           alone (backend eager: no Inductor compile): one whose compiled
                           forward differs (examples/test_steps/compiled_differs.py: a
                           failed verdict) and one whose float64 copy draws other random
                           numbers (randn_like: no reference, its loss disagrees)
    regional_absent        what the child's measure records when regional compilation finds
                           no repeated block (examples/test_steps/tiny_mlp.py, in-process)

from the child's own functions, called in this process (torch on the CPU, no compile);

in documents recorded the way a run of the checkout records them: each real document's
(bench/facts_render_diff.py's list) recommendations and run health recorded again from its
own measurements, on the machine as it was and on a busy one (every decision withheld), and
the decisions of tests/unit/report/test_decision_words.py's scenarios (every caveat, a variant
ruled out by its numerics, no variant to quote), idle and withheld; and (estimator, method,
degraded, error, failure) the documents run/ writes of a two-step config through its real
orchestration with a stand-in launcher (no child process; run_documents): every variant
measured; a child that crashes, one whose step raises, one that times out, one that wrote a
NaN, one whose diagnostics name measured keys; a recording that raises; eager failing; a run
interrupted. A sentence: a string with a space in it (codes and variant ids have none).

    PYTHONPATH=<checkout>/runner python bench/stored_sentences.py
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "unit"))
for _wing in ("results", "run"):  # the stand-in child's outputs (test_result.py)
    sys.path.insert(0, str(HERE.parent / "tests" / "unit" / _wing))

from facts_render_diff import UNIT, re_recorded, real_documents  # noqa: E402


def strings(value: Any, skip: str = "estimator") -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() if k != skip for s in strings(v, skip)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v, skip)]
    return []


def estimators(value: Any) -> list[str]:
    if isinstance(value, dict):
        found = [v for k, v in value.items() if k == "estimator" and isinstance(v, str)]
        return found + [s for v in value.values() for s in estimators(v)]
    if isinstance(value, list):
        return [s for v in value for s in estimators(v)]
    return []


def sentences(items: list[str]) -> int:
    return sum(1 for s in items if " " in s)


def scenario_documents() -> dict[str, dict[str, Any]]:
    """A document per decision scenario (test_decision_words.py's), idle and withheld."""
    from decision_docs import typed, variant
    from gate_docs import result, step

    from compilegate.results.recommendation import recommend, withheld

    steady = [1.45, 1.55, 1.5, 1.6]
    scenarios = {
        "degraded, unchecked": [
            variant("default", [1.6] * 4, numerics=None, degraded=["2 graph breaks", "1 more"])
        ],
        "ruled out": [variant("fast", [2.0] * 4, numerics="fail"), variant("safe", steady)],
        "beats none": [variant("slow", [0.9, 0.92, 0.91, 0.9])],
        "untrusted": [variant("fast", [2.0] * 4, numerics="error")],
        "undecided": [variant("default", [1.10, 1.25, 1.23, 1.31])],
    }
    out = {}
    for name, variants in scenarios.items():
        advice = recommend(typed(variants), 50_000 if name == "undecided" else 10_000)
        for unsteady in (False, True):
            doc = result(step())
            chosen = withheld(advice) if unsteady else advice
            doc["steps"][0]["recommendation"] = chosen.to_json(as_recorded=True)
            out[f"scenario {name}{' withheld' if unsteady else ''}"] = doc
    return out


# What the stand-in child says itself (its step's exception, its last line of output): text
# that is not compilegate's, which a document may keep (counted apart).
USER_ERROR = "RuntimeError: the user's step raised"
LAST_WORDS = "last words"


class StandInLauncher:
    """Answers like run/launcher.ChildLauncher.run, with no child process: the child's
    report, or at `failures[label]` what went wrong there."""

    python = "python"
    stream = sys.stderr
    shares_host_paths = False
    children_local = True
    shared_cache_dir = None

    def __init__(self, failures: dict[str, str]) -> None:
        self.host_env = {"PATH": "/bin"}
        self.failures = failures

    def run(self, spec: Any, *, label: str, timeout_s: float, env_opt_in=(), cache_dir=None):
        from test_result import ENV, child_output, timed

        from compilegate.child.protocol import ChildReport
        from compilegate.errors import RunInterrupted
        from compilegate.run.child_budget import BudgetPassed, ChildBudget
        from compilegate.run.child_failure import Crashed, TimedOut
        from compilegate.run.child_process import ChildOutcome

        kind = spec.to_json()["kind"]
        how = self.failures.get(label, "")
        if how == "interrupt":
            raise RunInterrupted(signal.SIGTERM)
        if how == "crash":
            return ChildOutcome(None, Crashed("SIGKILL", 9), output_tail=[LAST_WORDS])
        if how == "timeout":
            passed = BudgetPassed("cpu", ChildBudget(60.0, 240.0), 61.0, 75.0)
            return ChildOutcome(None, TimedOut(passed))
        if how == "raises":
            report = {"status": "error", "error": USER_ERROR}
            return ChildOutcome(ChildReport.from_json(report), None)
        if kind == "probe":
            return ChildOutcome(ChildReport.from_json({"status": "ok", "environment": ENV}), None)
        if kind == "eager":
            samples = timed(10)
            if how == "nan":
                samples["samples"][0] = float("nan")
            eager = {"warmup_s": [0.1], "peak_bytes": None, "timed": {"eager": samples}}
            eager["timed"]["eager_b"] = timed(10, seed=9)
            raw = {"status": "ok", "device": "cpu", "eager": eager}
            return ChildOutcome(ChildReport.from_json(raw), None)
        output = child_output(10.0, 5.0)
        if how == "nan":
            output["variant"]["warmup_s"][0] = float("nan")
        if how == "clash":  # diagnostics that name what was measured: refused
            output["diagnostics"]["step_ms"] = {"median": 0.001}
        return ChildOutcome(ChildReport.from_json({"status": "ok", **output}), None)


RUN_CONFIG = """\
version: 1
steps:
  - name: first
    entry: step.py:make_step
    variants: [{mode: default, name: a}, {mode: default, name: b}, {mode: default, name: c}]
    variant_processes: 2
  - name: second
    entry: step.py:make_step
    variants: [{mode: default, name: a}]
"""
# name -> the labels that fail and how
RUN_SCENARIOS = {
    "run: all measured": {},
    "run: a child crashes, one raises, one times out": {
        "first/a": "crash",
        "first/b": "raises",
        "second/a": "timeout",
    },
    "run: a later process crashes, a NaN, refused diagnostics": {
        "first/a#2": "crash",
        "first/b": "nan",
        "first/c": "clash",
    },
    "run: eager fails (a NaN, a timeout)": {"first/eager#1": "nan", "second/eager#1": "timeout"},
    "run: interrupted": {"first/b#2": "interrupt"},
}


def run_documents() -> dict[str, dict[str, Any]]:
    """The documents run/ writes of RUN_CONFIG, through its orchestration (run_config) with
    the stand-in launcher, per RUN_SCENARIOS."""
    import io
    import tempfile

    from compilegate.config.loading import load_config_file
    from compilegate.errors import RunInterrupted
    from compilegate.results import document as result_document
    from compilegate.run.orchestrate import RunOptions, run_config

    out = {}
    for name, failures in RUN_SCENARIOS.items():
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            (root / "step.py").write_text("def make_step(device='cpu'):\n    pass\n")
            (root / "compilegate.yml").write_text(RUN_CONFIG)
            config = load_config_file(root / "compilegate.yml")
            where = root / "result.json"
            options = RunOptions(where, stream=io.StringIO(), launcher=StandInLauncher(failures))
            try:
                run_config(config, options)
            except RunInterrupted:
                pass
            out[name] = result_document.json.loads(where.read_text())
    return out


def written(document: dict[str, Any]) -> dict[str, list[str]]:
    """The strings run/ and results/ wrote, by field: estimator, method, degraded, error,
    failure."""
    found: dict[str, list[str]] = {k: [] for k in ("method", "degraded", "error", "failure")}
    for step in document["steps"]:
        eager = step.get("eager") or {}
        for key in ("aa_ratio", "per_yardstick"):
            ratio = eager.get(key) or {}
            found["method"] += [ratio["method"]] if ratio.get("method") else []
        found["error"] += [step["error"]] if step.get("error") else []
        found["failure"] += _failure_strings(step.get("failure"))
        for variant in step["variants"]:
            found["error"] += [variant["error"]] if variant.get("error") else []
            found["failure"] += _failure_strings(variant.get("failure"))
            found["degraded"] += [
                d for d in variant.get("degraded") or () if d.startswith("diagnostics tried")
            ]
            for key in ("speedup", "aa_ratio", "eager_per_yardstick", "compiled_per_yardstick"):
                ratio = variant.get(key) or {}
                found["method"] += [ratio["method"]] if ratio.get("method") else []
    found["estimator"] = estimators(document["steps"])
    return found


def _failure_strings(failure: Any) -> list[str]:
    if not isinstance(failure, dict):
        return []
    theirs = {"doing", "last_output"}
    values = [v for k, v in failure.items() if k not in theirs and k != "figures"]
    values += list((failure.get("figures") or {}).values())
    return [v for v in values if isinstance(v, str)]


def child_strings() -> dict[str, tuple[list[str], list[str]]]:
    """family -> (the strings the child writes that are ours, the exception text it keeps),
    from its functions called here (CHILD_FAMILIES)."""
    import os
    import types

    from compilegate.child import cache_artifacts, instruction_counter, numerics, step_work
    from compilegate.child.diagnostics import CompileProbe

    out: dict[str, tuple[list[str], list[str]]] = {}
    cpu = step_work.tally([], device="cpu", compiled=True, counter_reads=frozenset())
    recompiled = step_work.all_absent(step_work.RECOMPILED, 0)
    failed = step_work.count_step_work(types.SimpleNamespace(), 0)  # a step the pass breaks
    records = (cpu, recompiled, failed)
    out["step_work.absent"] = (
        [why for record in records for why in record["absent"].values()],
        [failed["pass_error"]] if "pass_error" in failed else [],
    )
    started = instruction_counter.begin()
    if started is None:  # a machine with a hardware counter: nothing absent
        instruction_counter.end()
    out["instructions_absent"] = ([started["absent"]] if started else [], [])
    saved_dir = os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
    try:
        saved = cache_artifacts.save()
    finally:
        if saved_dir is not None:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = saved_dir
    out["artifacts_absent"] = ([saved["absent"]] if "absent" in saved else [], [])
    quiet = lambda phase, message: None  # noqa: E731
    variant = {"id": "default", "compile_target": "model"}
    skipped = numerics.check_numerics(None, {"numerics": {"steps": 0}}, variant, quiet)
    raised = numerics.check_numerics(types.SimpleNamespace(), {}, variant, quiet)
    # Before the codes the exception was the reason itself: the child's text, not ours.
    error = raised.get("error") or raised["reason"]
    ours = [skipped["reason"]] + ([raised["reason"]] if "error" in raised else [])
    out["numerics.reason"] = (ours, [error])
    probe = CompileProbe(Path("/nonexistent"))
    probe._snapshot = {"records": None}  # build_report raises on it
    broken = probe.report()
    notes = list(broken.get("degraded") or ())
    out["diagnostics failed"] = (notes, [broken["diagnostics_error"]] if not notes else [])
    # What this checkout's child writes of the recorded PyTorch snapshots (tests/unit/data:
    # GPT-2's library break, a print in an inlined helper on 2.4 and 2.13)...
    from compilegate.child import diagnostics_report
    from compilegate.child.dynamo_logs import PathClassifier

    site_packages = "/venv/lib/python3.11/site-packages"
    classifier = PathClassifier(
        "/repo",
        {"torch": f"{site_packages}/torch", "compilegate": "/repo/runner/compilegate"},
        [site_packages, "/usr/lib/python3.11"],
    )
    degraded: list[str] = []
    fallbacks: list[str] = []
    for snapshot in sorted((UNIT / "data").glob("graph_breaks_*.json")):
        written = diagnostics_report.build_report(json.loads(snapshot.read_text()), classifier)
        degraded += written.get("degraded") or []
        fallbacks += written.get("fallback_reasons") or []
    # ... and, where its child still composes notes (before issue 53's last items), those it
    # writes again from each real document's facts, and the fallback reasons they recorded.
    describe = getattr(diagnostics_report, "describe_degradation", None)
    for doc, _ in real_documents().values() if describe is not None else ():
        for raw_step in doc["steps"]:
            for raw in raw_step["variants"]:
                if raw.get("graph_breaks") is None or raw.get("recompiles") is None:
                    continue
                fallbacks += raw.get("fallback_reasons") or []
                report = {
                    "graph_breaks": raw["graph_breaks"],
                    "recompiles": raw["recompiles"],
                    "fallback_reasons": raw.get("fallback_reasons") or [],
                    "fallbacks_to_eager": raw.get("fallbacks_to_eager") or 0,
                }
                degraded += describe(report)
    out["degraded"] = (degraded, [])
    out["fallback_reasons"] = (fallbacks, [])
    out.update(last_sentences(classifier))
    return out


def last_sentences(classifier: Any) -> dict[str, tuple[list[str], list[str]]]:
    """Issue 53's last items: the limit's note and the recompile reasons build_report writes of
    the recorded snapshots, a numerics verdict's words, regional compilation's absence."""
    from compilegate.child import diagnostics_report

    data = UNIT / "data"
    limits: list[str] = []
    reasons: tuple[list[str], list[str]] = ([], [])
    for snapshot in sorted([*data.glob("graph_breaks_*.json"), *data.glob("recompiles_*.json")]):
        snap = json.loads(snapshot.read_text())
        written = diagnostics_report.build_report(snap, classifier)
        message = written["recompiles"].get("limit_message")
        limits += [message] if message else []
        torch_said = " ".join(r["text"] for r in snap.get("records") or ())
        torch_said += " ".join(str(m.get("recompile_reason")) for m in snap.get("metrics") or ())
        for event in written["recompiles"]["events"]:
            for reason in event["reasons"]:
                reasons[reason in torch_said].append(reason)
    return {
        "limit_message": (limits, []),
        "recompile reasons": (reasons[0], reasons[1]),
        "numerics verdict": numerics_verdicts(),
        "regional_absent": (regional_absent(), []),
    }


def numerics_verdicts() -> tuple[list[str], list[str]]:
    """(the strings of the numerics records the child writes of a failed verdict and of a
    reference whose loss disagrees with eager's, the exception text among them: none)."""
    import types

    import torch

    from compilegate.child.measure import StepBuilder
    from compilegate.child.numerics import check_numerics
    from compilegate.child.protocol import EntryPoint
    from compilegate.child.user_code import StepParts

    class Noisy(torch.nn.Module):  # draws like its input: other numbers in float64
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(24, 5)

        def forward(self, x: Any) -> Any:
            return self.fc(x + 0.5 * torch.randn_like(x))

    def noisy_parts() -> StepParts:
        torch.manual_seed(0)
        model = Noisy()
        data = torch.randn(32, 24, generator=torch.Generator().manual_seed(3))
        target = torch.randint(0, 5, (32,), generator=torch.Generator().manual_seed(4))
        return StepParts(
            model,
            torch.optim.SGD(model.parameters(), lr=0.1),
            lambda index: (data, target),
            lambda model, inputs: torch.nn.functional.cross_entropy(model(inputs[0]), inputs[1]),
        )

    path = HERE.parent / "examples" / "test_steps" / "compiled_differs.py"
    differs = StepBuilder(
        EntryPoint(f"{path}:make_step", str(path), "make_step", 1), HERE.parent, "cpu", 0
    )
    noisy = types.SimpleNamespace(device="cpu", group=None, build=noisy_parts)
    variant = {"id": "default", "compile_kwargs": {"backend": "eager"}, "compile_target": "model"}
    settings = {"seed": 0, "amp": None, "numerics": {"steps": 2}}
    quiet = lambda phase, message: None  # noqa: E731
    found: list[str] = []
    for builder in (differs, noisy):
        record = check_numerics(builder, settings, variant, quiet)
        assert record["status"] in ("pass", "fail"), record  # a verdict, as run here
        for key in ("reason", "reference_error", "reference_disagreement"):
            found += strings(record.get(key))
    return found, []


def regional_absent() -> list[str]:
    """What the child's measure records for a regional process whose model has no repeated
    block (child/main.py's Child.measure, its spec and process stood in for)."""
    import types

    from compilegate.child.main import Child
    from compilegate.child.protocol import EntryPoint

    path = HERE.parent / "examples" / "test_steps" / "tiny_mlp.py"
    spec = types.SimpleNamespace(
        kind="variant",
        repo_root=str(HERE.parent),
        settings={
            "seed": 0,
            "numerics": {},
            "iterations": 1,
            "rounds": 1,
            "warmup": 1,
            "amp": None,
        },
        entry=EntryPoint(f"{path}:make_step", str(path), "make_step", 1),
        variant={"id": "regional", "compile_kwargs": {}, "compile_target": "blocks"},
        timing_only=True,
        cache_artifacts=None,
        numerics_reference_out=None,
    )
    quiet = lambda phase, message: None  # noqa: E731
    stand_in = types.SimpleNamespace(spec=spec, progress=quiet, control=None, group=None)
    measured = Child.measure(stand_in, "cpu")  # type: ignore[arg-type]
    return [measured["variant"]["regional_absent"]]


def marks(document: dict[str, Any]) -> list[str]:
    """The `unsteady_times` items `baseline update` writes of this result."""
    from compilegate.gate.baseline import with_times_vouched
    from compilegate.results.model import parse

    vouched = with_times_vouched(parse(document, "result.json"), force=False).to_json()
    return [s for step in vouched["steps"] for s in step.get("unsteady_times") or ()]


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    documents: dict[str, dict[str, Any]] = {}
    for name, (doc, _) in real_documents().items():
        for busy in (False, True):
            documents[f"{name}{' busy' if busy else ''}"] = re_recorded(doc, busy)
    documents.update(scenario_documents())
    totals = {"recommendation": 0, "run_health": 0, "unsteady_times": 0, "estimator": 0}
    strings_seen = {"recommendation": 0, "run_health": 0, "unsteady_times": 0}
    for doc in documents.values():
        recs = [s.get("recommendation") or {} for s in doc["steps"]]
        rec_strings = strings(recs)
        unsteady = strings((doc.get("run_health") or {}).get("unsteady") or [])
        times = marks(doc)
        strings_seen["recommendation"] += len(rec_strings)
        strings_seen["run_health"] += len(unsteady)
        strings_seen["unsteady_times"] += len(times)
        totals["recommendation"] += sentences(rec_strings)
        totals["run_health"] += sentences(unsteady)
        totals["unsteady_times"] += sentences(times)
        totals["estimator"] += sentences(estimators(recs))
    print(f"{len(documents)} documents recorded by {sys.modules['compilegate'].__file__}")
    for field, count in totals.items():
        seen = f" of {strings_seen[field]} strings" if field in strings_seen else ""
        print(f"  {field:15} {count} sentences{seen}")
    runs = run_documents()
    print(f"{len(runs)} documents written by run/ (a stand-in launcher: {len(RUN_SCENARIOS)} runs)")
    by_field: dict[str, list[str]] = {}
    for doc in runs.values():
        for field, items in written(doc).items():
            by_field.setdefault(field, []).extend(items)
    for field in ("estimator", "method", "degraded", "error", "failure"):
        items = by_field.get(field, [])
        ours = [i for i in items if i not in (USER_ERROR, LAST_WORDS)]
        own = len(items) - len(ours)
        theirs = f" ({own} the child's own text)" if own else ""
        print(f"  {field:15} {sentences(ours)} sentences of {len(items)} strings{theirs}")
    print("the child's own (its functions called here; degraded from the real documents' facts)")
    for family, (ours, exceptions) in child_strings().items():
        kept = f" (+{len(exceptions)} not ours: exception or torch text)" if exceptions else ""
        print(f"  {family:20} {sentences(ours)} sentences of {len(ours)} strings{kept}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
