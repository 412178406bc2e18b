"""The golden verdicts: every stored document judged against every other, as the gate did.

Regenerate (only when a verdict rule changes on purpose, and say so in the commit):

    PYTHONPATH=runner python tests/unit/golden_verdicts.py [--documents]

It writes, for each pair of the stored documents the gate can be asked about, the verdict
rows (values, facts and words) and exit code of today's gate into
tests/unit/data/golden/verdicts.json. With --documents it first makes the documents under
tests/unit/data/golden/docs/ anew (with gate_docs.py and decision_docs.py, and baselines made
from them by `baseline update`'s merge) — only on purpose: the stored ones are the older
shapes the gate must keep reading (e.g. a config block without `accept_label`). The two
H200 runs of 2026-12-04 (tests/unit/data/h200-2026-12-04, as in
../shared/reference/gpu-runs/2026-12-04/) are judged against each other and against
themselves. test_golden_verdicts.py reads the same
documents through the reading door and asserts the same rows and exit codes.
"""

from __future__ import annotations

import copy
import gzip
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
GOLDEN = HERE / "data" / "golden"
DOCS = GOLDEN / "docs"
VERDICTS = GOLDEN / "verdicts.json"
H200 = HERE / "data" / "h200-2026-12-04"
H200_RUNS = ("run1-result", "run2-result")
# Documents only ever read as a baseline (an older shape a result may not have).
BASELINE_ONLY = ("old-baseline-shape",)
# Baselines judged against every result, not only against the plain one.
RICH_BASELINES = (
    "updated-base-then-two-steps",
    "updated-base-then-variant-error",
    "history",
    "processes",
    "old-baseline-shape",
    "two-variants",
)


def synthetic_documents() -> dict[str, dict[str, Any]]:
    """Small result documents, each changing one thing a judge looks at."""
    from decision_docs import variant as decided_variant
    from gate_docs import (
        environment,
        process,
        recompile,
        result,
        site,
        step,
        variant,
        with_history,
        with_processes,
    )

    docs: dict[str, dict[str, Any]] = {
        "base": result(step()),
        "speed-drop": result(step(variants=[variant(speedup=1.0)])),
        "speed-drop-noisy": result(
            step(variants=[variant(speedup=1.15, noise_pct=12.0, speedup_half_width_pct=8.0)])
        ),
        "speed-up": result(step(variants=[variant(speedup=1.6)])),
        "compile-slower": result(step(variants=[variant(compile_s=20.0)])),
        "recompiles": result(step(variants=[variant(recompiles=2, recompile_events=None)])),
        "recompile-event": result(step(variants=[variant(recompile_events=[recompile()])])),
        "graph-break": result(
            step(variants=[variant(sites=[site("model.py", 42, "print() in forward")])])
        ),
        "fallback": result(step(variants=[variant(fallbacks=1)])),
        "numerics-fail": result(
            step(variants=[variant(numerics="fail", failed_tensors=["grad:fc.weight"])])
        ),
        "no-numerics": result(step(variants=[variant(numerics=None)])),
        "memory-up": result(step(variants=[variant(peak_bytes=2_600_000_000)])),
        "eager-slower": result(step(eager_ms=12.0)),
        "variant-error": result(step(variants=[variant(status="error", error="CUDA OOM")])),
        "step-error": result(step(status="error", error="child timed out after 600 s")),
        "two-variants": result(
            step(variants=[variant(), variant("max-autotune", mode="max-autotune")])
        ),
        "two-steps": result(step(), step("infer", entry="model.py:make_infer")),
        "fingerprint-changed": result(step(fingerprint="fp-2")),
        "definition-changed": result(step(variants=[variant(mode="reduce-overhead")])),
        "thresholds-loose": result(step(thresholds={"speedup_drop_pct": 30.0})),
        "other-gpu": result(step(), env=environment(gpu_name="NVIDIA A100-SXM4-80GB")),
        "other-torch": result(step(), env=environment(torch="2.11.0+cu128")),
        "cpu-run": result(step(device="cpu"), env=environment(device="cpu", gpu_name=None)),
        "declared-more": result(step(), declared_steps=["train", "infer"]),
    }
    eager = [process([10.0] * 5) for _ in range(4)]
    compiled = [[process([10.0] * 5, [8.0] * 5) for _ in range(4)]]
    slower = [[process([10.0] * 5, [9.0] * 5) for _ in range(4)]]
    docs["processes"] = result(with_processes(step(), copy.deepcopy(eager), compiled))
    docs["processes-slower"] = result(with_processes(step(), copy.deepcopy(eager), slower))
    docs["history"] = result(
        with_history(with_processes(step(), copy.deepcopy(eager), copy.deepcopy(compiled)))
    )
    decided = variant(compile_s=20.0)
    decided["processes"] = decided_variant("default", [1.25, 1.2, 1.3, 1.25])["processes"]
    docs["decided"] = result(step(variants=[decided]))
    old = copy.deepcopy(docs["base"])
    for variant_doc in old["steps"][0]["variants"]:
        variant_doc.pop("compile_cost", None)
        variant_doc.pop("torch_state", None)
    docs["old-baseline-shape"] = old
    return docs


def baselines_from_updates(docs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Baselines as `compilegate baseline update` writes them (gate/baseline.py's merge)."""
    from gate_docs import merge_documents

    made = {}
    where = Path("baseline.json")
    first, _ = merge_documents(None, docs["base"], where)
    made["updated-base"] = first
    made["updated-base-then-speed-drop"], _ = merge_documents(first, docs["speed-drop"], where)
    made["updated-base-then-variant-error"], _ = merge_documents(
        first, docs["variant-error"], where
    )
    made["updated-base-then-two-steps"], _ = merge_documents(first, docs["two-steps"], where)
    return made


def stored_documents() -> dict[str, Path]:
    """Every golden document's name and file."""
    paths = {path.name.removesuffix(".json"): path for path in sorted(DOCS.glob("*.json"))}
    for run in H200_RUNS:
        paths[f"h200-{run}"] = H200 / f"{run}.json.gz"
    return paths


def read_text(path: Path) -> str:
    if path.suffix == ".gz":
        return gzip.decompress(path.read_bytes()).decode("utf-8")
    return path.read_text(encoding="utf-8")


def read_document(path: Path, role: str) -> Any:
    """The document at `path`, through the reading door (strict checks, older shapes)."""
    from compilegate.gate.documents import check_result_document

    document = json.loads(read_text(path))
    check_result_document(document, str(path), role=role)
    return document


def pairs(names: list[str]) -> list[tuple[str, str]]:
    """(baseline, result) pairs: every document against the plain one both ways, the
    baselines with the most structure against every result, the H200 runs each against
    each, and across (another machine: incomparable)."""
    h200 = [n for n in names if n.startswith("h200-")]
    small = [n for n in names if n not in h200]
    results = [n for n in small if n not in BASELINE_ONLY]
    chosen = [(b, "base") for b in small] + [("base", r) for r in results]
    for b in RICH_BASELINES:
        chosen += [(b, r) for r in results if (b, r) not in chosen]
    chosen += [(b, r) for b in h200 for r in h200]
    chosen += [("base", h200[0]), (h200[1], "base")]
    return chosen


def judge(baseline: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    from compilegate.gate.compare import compare_to_baseline
    from compilegate.results.model import parse

    report = compare_to_baseline(
        parse(baseline, "baseline", "baseline"), parse(result, "result", "result")
    )
    from compilegate.report.verdict_json import verdict_json

    # as stored: through JSON (tuples become lists, enums their values)
    rows = json.loads(json.dumps(verdict_json(report)["verdicts"]))
    return {"exit_code": report.exit_code, "rows": rows}


def main(argv: list[str]) -> int:
    if "--documents" in argv:
        docs = synthetic_documents()
        docs.update(baselines_from_updates(docs))
        DOCS.mkdir(parents=True, exist_ok=True)
        for old in DOCS.glob("*.json"):
            old.unlink()
        for name, doc in docs.items():
            path = DOCS / f"{name}.json"
            path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    paths = stored_documents()
    verdicts = {}
    for base_name, result_name in pairs(list(paths)):
        baseline = read_document(paths[base_name], "baseline")
        result = read_document(paths[result_name], "result")
        verdicts[f"{base_name} | {result_name}"] = judge(baseline, result)
    lines = [f"{json.dumps(key)}: {json.dumps(verdicts[key])}" for key in sorted(verdicts)]
    VERDICTS.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    codes: dict[int, int] = {}
    for entry in verdicts.values():
        codes[entry["exit_code"]] = codes.get(entry["exit_code"], 0) + 1
    print(f"{len(paths)} documents, {len(verdicts)} pairs, exit codes {sorted(codes.items())}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(main(sys.argv[1:]))
