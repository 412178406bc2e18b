"""Run sets the report tests render: written as result files and judged by the real gate.

two_by_three     2 torch versions × 3 steps, failing on compile time (same code and torch
                 as the baseline on one version), step speed, a new graph break, and an
                 inconclusive speedup
hostile          strings from user code that try to break out of the markdown
oversized        10 versions × 40 steps × 20 graph-break sites: over GitHub's limit
two_versions_failing  issue 31's stored-baseline failure on two torch versions
nanogpt_graph_break   a real run (data/nanogpt/): karpathy/nanoGPT's 2-layer GPT, variants
                 default and default+dynamic on torch 2.13.0, its pull request's
                 `torch.isnan(y).any().item()` in attention breaking the graph
"""

from __future__ import annotations

import json
from pathlib import Path

from gate_docs import compile_cost, environment, recompile, result, site, step, variant

from compilegate.gate.run_set import ResultSource, RunSetVerdict, judge_run_set
from compilegate.results.model import parse

HOSTILE = (
    "x | y </details> <script>alert(1)</script> @octo-org/team ![x](http://evil.example/p.png) "
    "[click](https://evil.example) ``` `tick` **bold** # heading www.evil.example "
    "a_very_long_identifier_without_any_space_that_would_stretch_a_table_cell_far_beyond_the_column"
)
STEP_VARIANT = {"mode": "default", "compile_target": "step"}


def write(path: Path, document: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


NANOGPT = Path(__file__).parent / "data" / "nanogpt"


def judge(tmp_path: Path, baseline: dict | None, **results: dict) -> RunSetVerdict:
    sources = [
        ResultSource(write(tmp_path / name / "result.json", doc), name)
        for name, doc in results.items()
    ]
    if baseline is None:
        return judge_run_set(sources, None)
    where = str(write(tmp_path / "baseline.json", baseline))
    return judge_run_set(sources, parse(baseline, where, "baseline"), where)


def _steps(**changes: dict) -> list[dict]:
    """transformer (default, default+step), mlp, gpt; `changes[step]` overrides variants."""
    transformer = changes.get("transformer", {})
    return [
        step(
            "transformer",
            variants=[
                variant(**transformer.get("default", {})),
                variant("default+step", **{**STEP_VARIANT, **transformer.get("step", {})}),
            ],
        ),
        step("mlp", variants=[variant(**changes.get("mlp", {}))]),
        step("gpt", variants=[variant(**changes.get("gpt", {}))]),
    ]


def two_by_three(tmp_path: Path) -> RunSetVerdict:
    baseline = result(*_steps(), env=environment(torch="2.13.0+cpu", commit="c0ffee1"))
    same_code = result(
        *_steps(transformer={"default": {"compile_s": 31.0, "speedup": 1.0}}),
        env=environment(torch="2.13.0+cpu", commit="c0ffee1"),
    )
    upgrade = result(
        *_steps(
            transformer={
                "default": {"compile_s": 25.0},
                "step": {"speedup": 0.92, "speedup_half_width_pct": 4.0},
            },
            mlp={"speedup": 1.12, "noise_pct": 12.0, "detectable_change_pct": 12.0},
            gpt={"sites": [site("train/gpt.py", 42, "Data-dependent branching")]},
        ),
        env=environment(torch="2.4.1+cu121", commit="c0ffee1"),
    )
    return judge(tmp_path, baseline, **{"torch-2.13.0": same_code, "torch-2.4.1": upgrade})


def hostile(tmp_path: Path) -> RunSetVerdict:
    bad_variant = variant(
        speedup=0.95,
        sites=[site("train/model.py", 21, HOSTILE), site("/usr/lib/x.py", 3, HOSTILE)],
        recompile_events=[recompile(reason=HOSTILE, function="forward|x")],
        numerics="fail",
        failed_tensors=["w"],
    )
    bad_variant["numerics"]["reason"] = HOSTILE
    bad_variant["numerics"]["worst"] = [{"tensor": HOSTILE, "kind": "grad"}]
    bad = step("bad|step" + HOSTILE[:40], variants=[bad_variant])
    bad["recommendation"] = {"variant": None, "text": HOSTILE}
    failed = step("broken", variants=[variant("default", status="error", error=HOSTILE)])
    current = result(bad, failed, env=environment(torch="2.13.0", commit=HOSTILE))
    baseline = result(step(bad["name"]), step("broken"))
    return judge(tmp_path, baseline, **{"torch-2.13.0": current})


def oversized(tmp_path: Path) -> RunSetVerdict:
    long_reason = "graph break " * 40
    steps = [
        step(
            f"s{i}", variants=[variant(sites=[site(f"m{j}.py", j, long_reason) for j in range(20)])]
        )
        for i in range(40)
    ]
    slower = [dict(s) for s in steps]
    slower[3] = step(
        "s3",
        variants=[variant(compile_s=40.0, sites=steps[3]["variants"][0]["graph_breaks"]["sites"])],
    )
    results = {
        f"torch-2.{v}.0": result(*(slower if v == 9 else steps), env=environment(torch=f"2.{v}.0"))
        for v in range(10)
    }
    return judge(tmp_path, result(*steps), **results)


def failing_rows(run_set: RunSetVerdict) -> list:
    """(version, row) for every row that fails the job or is inconclusive."""
    from compilegate.gate.verdict import VERDICT_EXIT_CODES

    return [
        (version, row)
        for version in run_set.versions
        if version.verdict is not None
        for row in version.verdict.verdicts
        if VERDICT_EXIT_CODES[row.verdict] != 0 or row.verdict == "inconclusive"
    ]


def with_history(tmp_path: Path, stored_runs: int = 6) -> RunSetVerdict:
    """The 2 × 3 run set judged against a baseline that keeps the default branch's last
    `stored_runs` runs of each step (gate/history.py), each a few percent off the next."""
    from gate_docs import process, run_summary, with_processes

    def timed(document: dict) -> dict:
        for step_doc in document["steps"]:
            eager = [10.0, 10.2, 10.1, 10.4]
            compiled = [v / 1.3 for v in eager]
            with_processes(
                step_doc,
                [process(eager)],
                [[process(eager, compiled)] * 2 for _ in step_doc["variants"]],
            )
        return document

    baseline = timed(result(*_steps(), env=environment(torch="2.13.0+cpu", commit="c0ffee1")))
    for step_doc in baseline["steps"]:
        summary = run_summary(step_doc)
        assert summary is not None
        runs = []
        for i in range(stored_runs):
            scale = 1 + 0.03 * ((i * 3) % 5 - 2) / 2
            run = json.loads(json.dumps(summary))
            run["eager_step_ms"] *= scale
            for values in run["variants"].values():
                values["compiled_step_ms"] *= scale
            run["created_at"] = f"2026-11-{20 + i:02d}T00:00:00Z"
            runs.append(run)
        step_doc["history"] = runs
    current = timed(result(*_steps(), env=environment(torch="2.13.0+cpu", commit="c0ffee1")))
    return judge(tmp_path, baseline, **{"torch-2.13.0": current})


# torch's own words for a Tensor.item() break (2.9/2.10), backticks and all.
ITEM_REASON = (
    "Unsupported Tensor.item() call with capture_scalar_outputs=False. Hint: set "
    "`torch._dynamo.config.capture_scalar_outputs = True` or use `torch.cond` instead"
)


def two_versions_failing(tmp_path: Path) -> RunSetVerdict:
    """A pull request judged against a stored baseline on two torch versions, as issue 31
    met it on nanoGPT: a new graph break at model.py:181 (Tensor.item()) and a fallback to
    eager on both versions, compile work grown 8.8 % in FX nodes on the baseline's torch (its
    compile time unchanged), a speedup drop on each, and an unsteady machine on both. The
    head's commit is the baseline's (the change not yet committed), as in that run."""

    def gpt(**changes: object) -> dict:
        found = step("gpt", variants=[variant(**changes)], device="cpu")
        return found

    def unsteady(document: dict) -> dict:
        document["run_health"] = {
            "machine": {"cpu_count": 2, "others_cpu_pct": 61.0, "load_average_mean": 3.4},
            "gpu": None,
            "aa_noise_pct": 9.0,
            "yardstick_drift_pct": 12.0,
            "multi_threaded": True,
            "unsteady": ["other processes took 61 % of its CPU (load average 3.4 on 2 cores)"],
        }
        return document

    cpu = {"gpu_name": None, "device": "cpu", "cuda": None, "driver": None, "cpu_count": 2}
    base_cost = compile_cost(10.0, counts={"fx_nodes": 408, "guards": 120})
    grown_cost = compile_cost(10.2, counts={"fx_nodes": 444, "guards": 120})
    baseline = result(
        gpt(speedup=1.3, compile_cost=base_cost),
        env=environment(torch="2.10.0+cpu", commit="c0ffee1", **cpu),
    )
    broken = {
        "sites": [site("model.py", 181, ITEM_REASON)],
        "fallbacks_to_eager": 1,
        "compile_cost": grown_cost,
    }
    current = {
        "torch-2.9.1": unsteady(
            result(
                gpt(speedup=1.1, **broken),
                env=environment(torch="2.9.1+cpu", commit="c0ffee1", **cpu),
            )
        ),
        "torch-2.10.0": unsteady(
            result(
                gpt(speedup=1.12, **broken),
                env=environment(torch="2.10.0+cpu", commit="c0ffee1", **cpu),
            )
        ),
    }
    return judge(tmp_path, baseline, **current)


def nanogpt_graph_break(tmp_path: Path) -> RunSetVerdict:
    """The real nanoGPT run (data/nanogpt/head.json) judged against its stored baseline
    (baseline.json): compile work, a graph break and a fallback to eager failing alike on
    both variants, on an unsteady 2-core machine."""
    baseline = json.loads((NANOGPT / "baseline.json").read_text(encoding="utf-8"))
    head = json.loads((NANOGPT / "head.json").read_text(encoding="utf-8"))
    return judge(tmp_path, baseline, **{"torch-2.13.0": head})
