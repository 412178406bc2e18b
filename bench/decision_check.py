"""Was compilegate's decision right? Its predicted break-even against training runs.

For each step: compilegate runs twice (two predictions, each its own cold compiles); then,
in fresh processes with empty Inductor caches, pairs of training runs: N steps eager
(E) and torch.compile-then-N steps (C), alternating E C C E E C ..., a timestamp after
every step, N = 2 × the first run's predicted break-even (a step with no break-even:
--steps; capped at --max-steps). With --concurrent a pair's E and C run at the same time:
on a machine whose neighbours' load swings (2 cores at load 6 one minute, 16 the next), a
sequential pair measures the neighbours as much as the compile (an eager run here took
12.8 ms a step in one pair and 18.3 ms in the next, minutes apart, on an idle machine).
With --concurrent, --compile-threads 1 keeps the compiled run's compile workers off the
eager run's core, in compilegate's measurement too. From each pair's
timestamps:

    crossover      the step after which the compiled run became and stayed ahead, counting
                   its compile (none: it never did within N; in parentheses, where it
                   would at the pace of the run's second half: a projection, not counted)
    inside         the crossover lies inside the predicted 95 % interval (a step predicted
                   never to pay: no crossover)
    at k × BE      for k = 0.5, 1, 2: seconds the compiled run is ahead, the decision the
                   prediction gives for a run that long (payoff.verdict), and whether it
                   was right (compile: compiled ahead; stay_eager: eager ahead)

Run (2 cores shared, so it is long; log it):

    .venv/bin/python bench/decision_check.py --log decision_check.log \
        --out decision_check.json

A worker mode (--train) runs one training run and writes its timestamps; the driver starts
it. The steps run with threads: 1, as the config says, and the workers likewise.

With --lever, the compiled run pulls a lever of issue 42 and the prediction checked is
that lever's (docs/levers.md):

    artifacts  compilegate runs with cache_artifacts: true; its prediction is the
               recommendation's artifacts_break_even_steps. Before each pair a saver
               process compiles the step and writes torch.compiler.save_cache_artifacts()
               (untimed); the compiled run starts in an empty Inductor cache, loads the
               blob, then compiles, all on its clock.
    regional   compilegate runs with regional: true; its prediction is the variant's
               regional.break_even_steps (one process: the speedup's interval from its
               rounds, the compile's from the warm compiles' spread). The compiled run
               compiles each of the repeated blocks in place (child/training.py,
               compile_target "blocks").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "runner"))

from compilegate.report.decision_words import steps as fmt_steps  # noqa: E402
from compilegate.results.payoff import BreakEven, verdict  # noqa: E402

STEPS = {
    "pointwise_mlp": "examples/pointwise_mlp_step.py:make_step",
    "residual_mlp": "examples/residual_mlp_step.py:make_step",
    "transformer": "examples/transformer_step.py:make_step",
}
MULTIPLES = (0.5, 1.0, 2.0)
LEVERS = ("cold", "artifacts", "regional")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", action="append", choices=sorted(STEPS), help="default: both")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--runs", type=int, default=2, help="compilegate runs per step")
    parser.add_argument("--steps", type=int, default=2000, help="N for a step with no break-even")
    parser.add_argument("--max-steps", type=int, default=20000, help="cap on 2 x break-even")
    parser.add_argument("--iterations", type=int, default=50, help="compilegate iterations")
    parser.add_argument("--variant-processes", type=int, default=4)
    parser.add_argument(
        "--concurrent",
        action="store_true",
        help="run a pair's E and C at the same time (both see the same neighbours' load)",
    )
    parser.add_argument(
        "--compile-threads",
        type=int,
        help="Inductor's compile workers (TORCHINDUCTOR_COMPILE_THREADS) for compilegate's "
        "children and the training runs alike; 1 with --concurrent keeps a compile's workers "
        "off the eager run's core",
    )
    parser.add_argument(
        "--lever",
        choices=LEVERS,
        default="cold",
        help="the compiled run's lever and the prediction checked (module docstring)",
    )
    parser.add_argument("--log", type=Path, help="append progress here as well")
    parser.add_argument("--out", type=Path, help="write every figure as JSON here")
    parser.add_argument(
        "--table", type=Path, nargs="+", help="print the table of saved --out files"
    )
    parser.add_argument("--train", help=argparse.SUPPRESS)  # worker: entry spec
    parser.add_argument("--compiled", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--stamps", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--blob", type=Path, help=argparse.SUPPRESS)  # worker: artifacts
    parser.add_argument("--save", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.train:
        train(args.train, args.compiled, args.n, args.stamps, args.lever, args.blob, args.save)
        return
    if args.table:
        figures = [fig for path in args.table for fig in json.loads(path.read_text())]
        print("\n".join(table(figures)))
        return
    log = Logger(args.log)
    log(f"decision_check: {' '.join(sys.argv[1:])}; cores {os.cpu_count()}, load {_load()}")
    figures = [check_step(name, args, log) for name in args.step or sorted(STEPS)]
    log("")
    for line in table(figures):
        log(line)
    if args.out:
        args.out.write_text(json.dumps(figures, indent=1))


class Logger:
    def __init__(self, path: Path | None) -> None:
        self.path = path

    def __call__(self, line: str) -> None:
        stamp = time.strftime("%H:%M:%S", time.gmtime())
        text = f"[{stamp}] {line}" if line else ""
        print(text, flush=True)
        if self.path:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(text + "\n")


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def check_step(name: str, args: argparse.Namespace, log: Logger) -> dict[str, Any]:
    predictions = []
    for run in range(1, args.runs + 1):
        log(f"{name}: compilegate run {run}/{args.runs} (load {_load()})")
        predictions.append(predict(name, args))
        rec = predictions[-1]
        log(f"{name}: run {run}: {rec['decision']}: {rec['text']}")
    found = predictions[0]["break_even_steps"]
    if args.lever != "cold":
        log(f"{name}: lever {args.lever}: predicted {json.dumps(found)}")
    if found and found["estimate"]:
        reference = min(round(found["estimate"]), args.max_steps // 2)
    else:
        reference = args.steps
    total = 2 * reference
    pairs = []
    order = ["EC", "CE"]
    for number in range(args.pairs):
        runs: dict[str, list[float]] = {}
        for sides in [order[0]] if args.concurrent else order[number % 2]:
            log(f"{name}: pair {number + 1}: {sides} run of {total:,} steps (load {_load()})")
            runs.update(run_training(STEPS[name], sides, total, _compile_threads(args), args.lever))
            for side in sides:
                log(f"{name}: pair {number + 1}: {side} took {runs[side][-1]:.1f} s")
        pairs.append(judge(runs["E"], runs["C"], reference, predictions))
        log(f"{name}: pair {number + 1}: {json.dumps(pairs[-1]['summary'])}")
    return {
        "step": name,
        "lever": args.lever,
        "reference_steps": reference,
        "predictions": predictions,
        "pairs": pairs,
    }


def predict(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """One compilegate run (fresh Inductor cache per variant): the step's recommendation."""
    with tempfile.TemporaryDirectory(prefix="decision-check-") as tmp:
        config = Path(tmp) / "compilegate.yml"
        config.write_text(
            "version: 1\nsteps:\n"
            f"  - name: {name}\n    entry: {STEPS[name]}\n"
            "    device: cpu\n    threads: 1\n    variants: [{mode: default}]\n"
            f"    iterations: {args.iterations}\n"
            f"    variant_processes: {args.variant_processes}\n"
            + ("    env: [TORCHINDUCTOR_COMPILE_THREADS]\n" if args.compile_threads else "")
            + ("    cache_artifacts: true\n" if args.lever == "artifacts" else "")
            + ("    regional: true\n" if args.lever == "regional" else "")
        )
        out = Path(tmp) / "result.json"
        env = {**os.environ, **_compile_threads(args), "PYTHONPATH": str(REPO_ROOT / "runner")}
        env.pop("TORCHINDUCTOR_CACHE_DIR", None)
        started = time.perf_counter()
        subprocess.run(
            [
                *(sys.executable, "-m", "compilegate", "run", "--config", str(config)),
                *("--out", str(out), "--repo", str(REPO_ROOT)),
            ],
            cwd=REPO_ROOT,
            env=env,
            check=False,
            capture_output=True,
        )
        document = json.loads(out.read_text())
    step = document["steps"][0]
    if step["status"] != "ok":
        raise SystemExit(f"compilegate failed on {name}: {step['error']}")
    recommendation = {**step["recommendation"], "wall_s": time.perf_counter() - started}
    return lever_prediction(recommendation, step["variants"][0], args.lever)


def lever_prediction(rec: dict[str, Any], variant: dict[str, Any], lever: str) -> dict[str, Any]:
    """The recommendation with `break_even_steps` the lever's: the cold compile's as it is;
    the artifacts' or regional compilation's interval (None: it never breaks even, or was
    not measured)."""
    if lever == "cold":
        return rec
    if lever == "artifacts":
        found = (variant.get("payoff") or {}).get("artifacts_break_even_steps")
        return {**rec, "cold_break_even_steps": rec["break_even_steps"], "break_even_steps": found}
    regional = variant.get("regional") or {}
    return {
        **rec,
        "cold_break_even_steps": rec["break_even_steps"],
        "break_even_steps": regional.get("break_even_steps"),
        "regional": regional,
    }


def _compile_threads(args: argparse.Namespace) -> dict[str, str]:
    if not args.compile_threads:
        return {}
    return {"TORCHINDUCTOR_COMPILE_THREADS": str(args.compile_threads)}


def run_training(
    entry: str, sides: str, n: int, extra_env: dict[str, str], lever: str = "cold"
) -> dict[str, list[float]]:
    """Fresh processes with empty Inductor caches, one per side ("E" eager, "C" compiled),
    started together when `sides` holds both: seconds since the step was built, after every
    training step (the compiled run's first steps include its compile, and with the
    artifacts lever the blob's loading; a saver process made the blob first, untimed)."""
    with tempfile.TemporaryDirectory(prefix="decision-check-run-") as tmp:
        blob = Path(tmp) / "artifacts.bin"
        lever_args = ["--lever", lever, "--blob", str(blob)]
        if lever == "artifacts" and "C" in sides:
            env = {**os.environ, **extra_env, "TORCHINDUCTOR_CACHE_DIR": f"{tmp}/inductor-save"}
            command = [sys.executable, __file__, "--train", entry, "--n", "2", "--compiled"]
            command += ["--stamps", f"{tmp}/save.bin", "--save", *lever_args]
            subprocess.run(command, env=env, check=True)
        running = {}
        for side in sides:
            stamps = Path(tmp) / f"{side}.bin"
            cache = str(Path(tmp) / f"inductor-{side}")
            env = {**os.environ, **extra_env, "TORCHINDUCTOR_CACHE_DIR": cache}
            command = [sys.executable, __file__, "--train", entry, "--n", str(n)]
            command += ["--stamps", str(stamps), *(["--compiled"] if side == "C" else [])]
            running[side] = (subprocess.Popen([*command, *lever_args], env=env), stamps)
        out = {}
        for side, (process, stamps) in running.items():
            if process.wait() != 0:
                raise SystemExit(f"the {side} training run failed (exit {process.returncode})")
            values = array("d")
            values.frombytes(stamps.read_bytes())
            out[side] = list(values)
    return out


def train(
    entry_spec: str,
    compiled: bool,
    n: int,
    stamps_path: Path,
    lever: str = "cold",
    blob: Path | None = None,
    save: bool = False,
) -> None:
    """Worker: the step as compilegate's child runs it (TrainingStep), threads: 1; the
    compiled run with `lever` (artifacts: load `blob` first, or with `save` write it after;
    regional: compile only the repeated blocks)."""
    import torch

    from compilegate.child.measure import StepBuilder
    from compilegate.child.training import TrainingStep
    from compilegate.run.entry_check import resolve_entry

    torch.set_num_threads(1)
    entry = resolve_entry(entry_spec, REPO_ROOT, "--train")
    parts = StepBuilder(entry, REPO_ROOT, "cpu", seed=0).build()
    kwargs = {"backend": "inductor", "fullgraph": False, "mode": "default"} if compiled else None
    start = time.perf_counter()
    if compiled and lever == "artifacts" and not save and blob is not None:
        torch.compiler.load_cache_artifacts(blob.read_bytes())
    target = "blocks" if compiled and lever == "regional" else "model"
    step = TrainingStep(parts, device="cpu", compile_kwargs=kwargs, compile_target=target)
    stamps = array("d")
    for index in range(n):
        step(index)
        stamps.append(time.perf_counter() - start)
    stamps_path.write_bytes(stamps.tobytes())
    if save and blob is not None:
        saved = torch.compiler.save_cache_artifacts()
        if saved is None:
            raise SystemExit("torch.compiler.save_cache_artifacts() saved nothing")
        blob.write_bytes(saved[0])


def crossover(eager: list[float], compiled: list[float]) -> int | None:
    """The step count from which the compiled run stayed ahead (None: it never did)."""
    found = None
    for index in range(len(eager) - 1, -1, -1):
        if compiled[index] <= eager[index]:
            found = index + 1
        else:
            break
    return found


def judge(
    eager: list[float], compiled: list[float], reference: int, predictions: list[dict[str, Any]]
) -> dict[str, Any]:
    crossed = crossover(eager, compiled)
    inside = [_inside(rec["break_even_steps"], crossed, len(eager)) for rec in predictions]
    at = []
    for k in MULTIPLES:
        steps = round(k * reference)
        ahead_s = eager[steps - 1] - compiled[steps - 1]
        decisions = [_decision(rec, steps) for rec in predictions]
        right = [_right(d, ahead_s) for d in decisions]
        at.append(
            {"k": k, "steps": steps, "ahead_s": ahead_s, "decisions": decisions, "right": right}
        )
    first = predictions[0]["break_even_steps"] if predictions else None
    ratio = crossed / first["estimate"] if crossed and first and first["estimate"] else None
    summary = {
        "crossover": crossed,
        "observed_over_predicted": round(ratio, 2) if ratio is not None else None,
        "projected": projected_crossover(at),
        "inside": inside,
        "ahead_s": [round(a["ahead_s"], 1) for a in at],
        "decisions": [a["decisions"] for a in at],
        "right": [a["right"] for a in at],
    }
    return {
        "crossover": crossed,
        "inside": inside,
        "at": at,
        "eager_total_s": eager[-1],
        "compiled_total_s": compiled[-1],
        "summary": summary,
    }


def projected_crossover(at: list[dict[str, Any]]) -> float | None:
    """Not crossed within the run: where the compiled run would catch up if the second
    half's pace held (the gap at the end over the gap's shrinking rate from 1x to 2x). None
    when it crossed, or the gap did not shrink. A projection, never counted as observed."""
    half, end = at[-2], at[-1]
    if end["ahead_s"] > 0:
        return None
    rate = (end["ahead_s"] - half["ahead_s"]) / (end["steps"] - half["steps"])
    return end["steps"] - end["ahead_s"] / rate if rate > 0 else None


def _inside(found: dict[str, Any] | None, crossed: int | None, total: int) -> bool | None:
    """Whether the observed crossover lies in the predicted interval; None when it cannot
    be told (not crossed within `total` steps, and the interval reaches beyond them)."""
    if found is None:
        return crossed is None
    if found["high"] is not None and found["low"] == found["high"]:
        return None  # a point (regional: one process): no interval to be inside
    high = float("inf") if found["high"] is None else found["high"]
    if crossed is None:
        return None if high > total else False
    return found["low"] <= crossed <= high


def _decision(rec: dict[str, Any], steps: int) -> str:
    found = rec["break_even_steps"]
    if rec.get("speedup") is None:
        return rec["decision"]
    return verdict(
        BreakEven(found["estimate"], found["low"], found["high"]) if found else None, steps
    )


def _right(decision: str, ahead_s: float) -> bool | None:
    if decision == "compile":
        return ahead_s > 0
    if decision == "stay_eager":
        return ahead_s <= 0
    return None


def table(figures: list[dict[str, Any]]) -> list[str]:
    lines = []
    for fig in figures:
        lever = fig.get("lever", "cold")
        lines.append(f"step {fig['step']}, lever {lever}: N = 2 x {fig['reference_steps']:,} steps")
        for number, rec in enumerate(fig["predictions"], 1):
            found = rec["break_even_steps"]
            interval = (
                "never"
                if found is None
                else f"{_fmt(found['estimate'])} ({_fmt(found['low'])}–{_fmt(found['high'])})"
            )
            lines.append(
                f"  compilegate run {number}: {rec['decision']}, break-even {interval}, "
                f"speedup {rec['speedup']['estimate']:.2f}x ({rec['speedup']['low']:.2f}–"
                f"{rec['speedup']['high']:.2f}), took {rec['wall_s']:.0f} s"
            )
        header = "  pair  crossover  inside(run1,run2)  " + "  ".join(
            f"{k}x: ahead s / decision / right" for k in MULTIPLES
        )
        lines.append(header)
        for number, pair in enumerate(fig["pairs"], 1):
            cells = [
                f"{a['ahead_s']:+7.1f} / {','.join(a['decisions'])} / "
                f"{','.join(_yes(r) for r in a['right'])}"
                for a in pair["at"]
            ]
            projected = projected_crossover(pair["at"])
            crossed = (
                f"{pair['crossover']:,}"
                if pair["crossover"] is not None
                else ("none" if projected is None else f"(~{fmt_steps(projected)})")
            )
            inside = ",".join(_yes(x) for x in pair["inside"])
            lines.append(f"  {number:>4}  {crossed:>9}  {inside:>17}  " + "  ".join(cells))
    inside = [x for fig in figures for p in fig["pairs"] for x in p["inside"][:1] if x is not None]
    same = all(
        len({r["decision"] for r in fig["predictions"]}) == 1
        and len({r["variant"] for r in fig["predictions"]}) == 1
        for fig in figures
    )
    at_two = [r for fig in figures for p in fig["pairs"] for r in p["at"][-1]["right"]]
    right = sum(1 for r in at_two if r)
    undecided = sum(1 for r in at_two if r is None)
    lines.append(
        f"crossover inside run 1's interval: {sum(inside)} of {len(inside)} pairs "
        f"(target >= 5 of 6); recommendation identical across runs: {same}; "
        f"right at 2x: {right} of {len(at_two)} ({undecided} undecided)"
    )
    return lines


def _fmt(value: float | None) -> str:
    return "never" if value is None else fmt_steps(value)


def _yes(value: bool | None) -> str:
    return {True: "yes", False: "NO", None: "-"}[value]


if __name__ == "__main__":
    main()
