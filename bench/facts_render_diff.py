"""Issue 53 (items 3, 4): the decision and run health became facts, worded by report/. Does
every screen still say what it said? Renders, with whichever compilegate is on sys.path, and
writes {key: text} as JSON, so that two checkouts' renders can be compared byte for byte:

    renders     the comment, `report` text and `run` text of every golden pair
                (tests/unit/golden_verdicts.py: 256 baseline | result pairs) and of the real
                documents (examples/report/, ../shared/reference/gpu-runs/2026-12-04/,
                tests/unit/data/nanogpt/, tests/unit/data/step_bound/), each as recorded
    re-recorded each real document's recommendations and run health recorded again by this
                checkout's results/ from the document's own measurements (what a run of this
                checkout writes), on the machine as it was and on a busy one (others took
                61 % of the CPU: run health unsteady, every decision withheld), rendered the
                same three ways
    sentences   each step's decision and each unsteady cause in full, per document

    PYTHONPATH=<checkout>/runner python bench/facts_render_diff.py --out renders.json
    python bench/facts_render_diff.py --compare old.json new.json

With --compare: how many keys differ, and the first lines that differ of each.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
UNIT = REPO_ROOT / "tests" / "unit"
GPU_RUNS = REPO_ROOT.parent.parent / "shared" / "reference" / "gpu-runs" / "2026-12-04"
if not GPU_RUNS.is_dir():  # a worktree under /work/wt/<name>, or the main checkout
    GPU_RUNS = Path("/work/shared/reference/gpu-runs/2026-12-04")
BUSY = {"others_cpu_pct": 61.0, "load_average_mean": 3.4, "cpu_count": 2}


def _load(path: Path) -> dict[str, Any]:
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    document: dict[str, Any] = json.loads(raw)
    return document


def real_documents() -> dict[str, tuple[dict[str, Any], dict[str, Any] | None]]:
    """name -> (result, baseline or None)."""
    examples = REPO_ROOT / "examples" / "report"
    base = _load(examples / "baseline.json")
    out: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {}
    for result in sorted((examples / "results").glob("*/result.json")):
        out[f"examples-{result.parent.name}"] = (_load(result), base)
    out["examples-baseline"] = (base, None)
    run1, run2 = _load(GPU_RUNS / "run1-result.json"), _load(GPU_RUNS / "run2-result.json")
    out["gpu-run1"] = (run1, None)
    out["gpu-run2-vs-run1"] = (run2, run1)
    nanogpt = UNIT / "data" / "nanogpt"
    out["nanogpt"] = (_load(nanogpt / "head.json"), _load(nanogpt / "baseline.json"))
    out["step-bound"] = (_load(UNIT / "data" / "step_bound" / "transformer.json"), None)
    return out


def renders(result: dict[str, Any], baseline: dict[str, Any] | None, where: Path) -> dict:
    from compilegate.gate.run_set import ResultSource, judge_run_set
    from compilegate.report.comment import render_comment
    from compilegate.report.run_set_text import render_run_set_text
    from compilegate.report.run_text import render_run_text
    from compilegate.results.model import parse

    where.mkdir(parents=True, exist_ok=True)
    result_path = where / "result.json"
    result_path.write_text(json.dumps(result), encoding="utf-8")
    typed_base = None
    base_path = None
    if baseline is not None:
        base_path = where / "baseline.json"
        base_path.write_text(json.dumps(baseline), encoding="utf-8")
        typed_base = parse(baseline, "baseline.json", "baseline")
    run_set = judge_run_set([ResultSource(result_path, "head")], typed_base, "baseline.json")
    document = parse(result, "result.json")
    out = {
        "comment": render_comment(run_set),
        "report": render_run_set_text(run_set),
        "run": render_run_text(document, run_set=run_set if baseline is not None else None),
    }
    return out


def re_recorded(result: dict[str, Any], busy: bool) -> dict[str, Any]:
    """The document with each step's recommendation and the run health recorded again by
    this checkout (the busy machine: every decision withheld)."""
    from compilegate.config.model import DEFAULT_STEPS_PER_RUN
    from compilegate.results.model import MachineHealth, parse, part_of
    from compilegate.results.recommendation import recommend, withheld

    try:  # before issue 53 the run's entry added the sentences to the health
        from compilegate.run.health_entry import run_health as health_of  # type: ignore
    except ImportError:  # since: results/run_health.py records the causes
        from compilegate.results.run_health import run_health as health_of

    raw = copy.deepcopy(result)
    document = parse(result, "result.json")
    recorded = document.run_health
    machine = recorded.machine if recorded is not None and recorded.machine else MachineHealth()
    if busy:
        machine = part_of(MachineHealth, {**machine.to_json(), **BUSY})
    gpu = recorded.gpu if recorded is not None else None
    health = health_of(machine, document.steps, gpu)
    raw["run_health"] = health.to_json(as_recorded=True)
    for raw_step, step in zip(raw["steps"], document.steps):
        if step.recommendation is None or step.failed:
            continue
        steps = (step.settings or {}).get("steps_per_run") or DEFAULT_STEPS_PER_RUN
        _payoffs_re_recorded(raw_step, step, steps)
        steps = (step.settings or {}).get("steps_per_run") or DEFAULT_STEPS_PER_RUN
        advice = recommend(step.variants, steps)
        if step.recommendation.bounds:
            from dataclasses import replace

            advice = replace(advice, bounds=step.recommendation.bounds)
        if health.unsteady:
            advice = withheld(advice)
        raw_step["recommendation"] = advice.to_json(as_recorded=True)
    return raw


def _payoffs_re_recorded(raw_step: dict[str, Any], step: Any, steps: int) -> None:
    """Each variant's payoff recorded again from its processes (results/document.py's
    finish_step), where the document recorded one: its speedup's estimator as this checkout
    records it."""
    from compilegate.results.payoff import measure
    from compilegate.results.recommendation import analyse

    for raw_variant, variant in zip(raw_step["variants"], step.variants):
        measured = measure(variant) if variant.payoff is not None else None
        if measured is not None:
            raw_variant["payoff"] = analyse(measured, steps).to_json(as_recorded=True)


def sentences(result: dict[str, Any]) -> dict[str, Any]:
    """Each step's decision in full and each unsteady cause in full, as this checkout says
    them."""
    from compilegate.report.health_words import said
    from compilegate.report.version_said import decisions
    from compilegate.results.model import parse
    from compilegate.results.run_health import unsteady_causes

    document = parse(result, "result.json")
    health = document.run_health
    causes = unsteady_causes(health) if health is not None else ()
    return {
        "decisions": [list(pair) for pair in decisions(document.steps)],
        "unsteady": [said(cause).full for cause in causes],
    }


def render_all() -> dict[str, Any]:
    sys.path.insert(0, str(UNIT))
    from golden_verdicts import VERDICTS, read_document, stored_documents

    out: dict[str, Any] = {}
    paths = stored_documents()
    # One fixed folder: the renders name the result's path, the same for both checkouts.
    tmp = Path(tempfile.gettempdir()) / "facts-render-diff"
    shutil.rmtree(tmp, ignore_errors=True)
    for index, pair in enumerate(sorted(json.loads(VERDICTS.read_text(encoding="utf-8")))):
        base_name, _, result_name = pair.partition(" | ")
        baseline = read_document(paths[base_name], "baseline")
        result = read_document(paths[result_name], "result")
        for kind, text in renders(result, baseline, tmp / f"g{index}").items():
            out[f"golden {pair} :: {kind}"] = text
    for name, (result, baseline) in real_documents().items():
        for kind, text in renders(result, baseline, tmp / name).items():
            out[f"real {name} :: {kind}"] = text
        out[f"real {name} :: sentences"] = sentences(result)
        for busy in (False, True):
            again = re_recorded(result, busy)
            label = f"re-recorded{' busy' if busy else ''} {name}"
            for kind, text in renders(again, baseline, tmp / f"{name}-{busy}").items():
                out[f"{label} :: {kind}"] = text
            out[f"{label} :: sentences"] = sentences(again)
    return out


def compare(old_path: Path, new_path: Path) -> int:
    old = json.loads(old_path.read_text(encoding="utf-8"))
    new = json.loads(new_path.read_text(encoding="utf-8"))
    differ = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
    golden = sum(1 for k in old if k.startswith("golden "))
    print(f"{len(old)} renders ({golden} of the golden pairs), {len(differ)} differ")
    for key in differ:
        print(f"--- {key}")
        a, b = _lines(old.get(key)), _lines(new.get(key))
        shown = 0
        for line_a, line_b in zip(a, b):
            if line_a != line_b and shown < 3:
                print(f"  old: {line_a.strip()[:300]}\n  new: {line_b.strip()[:300]}")
                shown += 1
        if len(a) != len(b):
            print(f"  lines: {len(a)} -> {len(b)}")
    return 1 if differ else 0


def _lines(value: Any) -> list[str]:
    if isinstance(value, str):
        return value.splitlines()
    return json.dumps(value, ensure_ascii=False, indent=1).splitlines()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"))
    args = parser.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        parser.error("--out or --compare")
    rendered = render_all()
    args.out.write_text(json.dumps(rendered, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{len(rendered)} renders written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
