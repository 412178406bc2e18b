"""What the numerics of a step with dropout cost, and why they compile again (issue 40).

Inductor draws its own random numbers unless `fallback_random` is set, and that flag is part
of the FX-graph cache key: the numerics of a dropout step compile the step a second time
(child/numerics.py). The way around it would be to time the `fallback_random` code too (one
compile for both), which is only sound if the flag leaves the compiled step's time alone.
This prints both halves of that question on the example transformer step (dropout on), in
one process with a fresh Inductor cache and `threads` threads:

1. the cold compile of the variant (the timed copy's warm-up, as the child's compile window),
   then the numerics exactly as a variant's first process runs them (check_numerics): their
   compiled copy's seconds (`compiled_copy_s`, the second compile included) and graphs;
2. the steady step time of eager, the compiled step as the user runs it (Inductor's random
   numbers) and the compiled step with `fallback_random` (ATen's), interleaved in rounds, the
   order rotating each round: medians and the per-round ratio fallback / default.

    python bench/numerics_rng.py [--rounds 12] [--iterations 30] [--threads 1]
        [--entry examples/transformer_step.py:make_step]

On this project's 2-core CPU (load average 3-12, other helpers' runs beside it): cold compile
27.5-116 s, the numerics' second compile 16-37 s; fallback / default step time 0.79 (median
of 12 rounds, each round 0.65-0.95): Inductor's own CPU random numbers cost a fifth of the
step, so the fallback code is not the code to time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "runner"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entry", default="examples/transformer_step.py:make_step")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="numerics-rng-")
    import torch

    from compilegate.child.measure import StepBuilder
    from compilegate.child.numerics import check_numerics
    from compilegate.child.training import TrainingStep
    from compilegate.run.entry_check import resolve_entry

    torch.set_num_threads(args.threads)
    entry = resolve_entry(args.entry, REPO_ROOT, "--entry")
    builder = StepBuilder(entry, REPO_ROOT, "cpu", 0)
    settings = {"seed": 0, "amp": None, "numerics": {"steps": 2, "tol": 1e-4}}
    variant = {"id": "default", "compile_kwargs": {}, "compile_target": "model"}

    def copy(compile_kwargs: dict | None) -> TrainingStep:
        return TrainingStep(builder.build(), device="cpu", amp=None, compile_kwargs=compile_kwargs)

    def run(step: TrainingStep, first: int, count: int) -> list[float]:
        samples = []
        for index in range(first, first + count):
            started = time.perf_counter()
            step(index)
            samples.append(time.perf_counter() - started)
        return samples

    eager = copy(None)
    run(eager, 0, args.warmup)
    default = copy({})
    cold_s = sum(run(default, 0, args.warmup))
    print(f"cold compile (warm-up of {args.warmup}, compile included): {cold_s:.1f} s", flush=True)
    numerics = check_numerics(builder, settings, variant, lambda phase, message: None)
    print(
        f"numerics: {numerics['status']}, fallback_random {numerics['fallback_random']}, "
        f"compiled copy {numerics['compiled_copy_s']:.1f} s "
        f"({numerics.get('compiled_graphs')} graphs compiled again)",
        flush=True,
    )
    # check_numerics reset Dynamo: `default` compiles again, from the FX-graph cache (warm).
    fallback = copy({"options": {"fallback_random": True}})
    warm_s = sum(run(default, args.warmup, 1))
    fallback_s = sum(run(fallback, 0, args.warmup))
    print(f"default again (warm cache): {warm_s:.1f} s; fallback_random copy: {fallback_s:.1f} s")
    sides = {"eager": eager, "default": default, "fallback_random": fallback}
    samples: dict[str, list[float]] = {name: [] for name in sides}
    ratios = []
    for number in range(args.rounds):
        names = list(sides)[number % 3 :] + list(sides)[: number % 3]
        medians = {}
        for name in names:
            taken = run(sides[name], args.warmup + 1, args.iterations)
            samples[name] += taken
            medians[name] = statistics.median(taken)
        ratios.append(medians["fallback_random"] / medians["default"])
    for name, taken in samples.items():
        print(f"{name:<16} median {statistics.median(taken) * 1e3:7.2f} ms")
    print(
        f"fallback_random / default: median {statistics.median(ratios):.3f} over {args.rounds} "
        f"rounds (each {min(ratios):.3f}-{max(ratios):.3f})"
    )


if __name__ == "__main__":
    main()
