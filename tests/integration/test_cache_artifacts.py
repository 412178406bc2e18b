"""Issue 42, the compile levers, with real torch.compile (Inductor, CPU), on a step whose
model repeats one block (examples/test_steps/repeated_blocks.py).

The portable cache (`cache_artifacts`): the first process saves
torch.compiler.save_cache_artifacts(), the parent hands the blob to the next process, which
starts from it in an empty Inductor cache. On the current torch the document has that process
(cache "artifacts"), the blob's size, its compile seconds and a break-even from them; on the
old torch (2.4, no such API) the lever is absent with the reason, that process reuses the
cache (on 2.4, whose FX-graph cache is off, a cold compile again), and the run still
recommends.

Regional compilation (`regional`): one more process compiles each of the two blocks in
place and times it against eager; the variant's `regional` says which blocks, its compile
seconds and step times. (A model with nothing repeated:
tests/unit/results/test_regional_blocks.py.)"""

from __future__ import annotations

import io
from typing import Any

import pytest
from cli_helpers import OLD_TORCH_PYTHON, REPO_ROOT, write_config

from compilegate.config.loading import load_config_file
from compilegate.report.absence_words import absence_words
from compilegate.results.model import Absence, parse
from compilegate.run.orchestrate import RunOptions, run_config
from compilegate.schemas import validation_errors

pytestmark = pytest.mark.compile

STEP = (
    "  - name: blocks\n"
    "    entry: examples/test_steps/repeated_blocks.py:make_step\n"
    "    variants: [{{mode: default}}]\n    warmup: 2\n    iterations: 4\n    rounds: 2\n"
    "    variant_processes: {processes}\n    cache_artifacts: true\n    regional: true\n"
    "    numerics: {{enabled: false}}\n"
)
# The current torch: cold, artifacts, then warm (the process after the artifacts one reuses
# the first's cache). The old one has no artifacts and its FX-graph cache off, so each
# process compiles cold: two say what it has to (the process after the cold one, no lever).
PROCESSES = {"current": 3, "old": 2}


@pytest.fixture(scope="module")
def measured(measuring_python: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("artifacts")
    processes = PROCESSES["old" if measuring_python == OLD_TORCH_PYTHON else "current"]
    step = STEP.format(processes=processes)
    config = load_config_file(write_config(tmp / "compilegate.yml", step), repo_root=REPO_ROOT)
    stream = io.StringIO()
    options = RunOptions(out_path=tmp / "result.json", python=measuring_python, stream=stream)
    document = run_config(config, options)
    assert validation_errors(document, "result") == []
    step = document["steps"][0]
    assert step["status"] == "ok", step["error"]
    variant = step["variants"][0]
    assert variant["status"] == "ok", (variant["error"], stream.getvalue()[-2000:])
    return {"document": document, "variant": variant, "log": stream.getvalue()}


def test_the_process_after_the_cold_one_starts_from_the_artifacts(measured: dict) -> None:
    variant, cost = measured["variant"], measured["variant"]["compile_cost"]
    caches = [process["cache"] for process in variant["processes"]]
    if measured["document"]["environment"]["torch"].startswith("2.4."):
        assert len(caches) == PROCESSES["old"] and "artifacts" not in caches  # "cold" each
        typed = parse(measured["document"], "result.json").steps[0].variants[0].compile_cost
        assert typed is not None and typed.artifacts_absent is Absence.NO_SAVE_CACHE_ARTIFACTS
        said = absence_words(typed.artifacts_absent, torch=typed.absent_torch)
        assert said == f"torch {measured['document']['environment']['torch']} has no " + (
            "torch.compiler.save_cache_artifacts"
        )
        assert "artifacts_wall_s" not in cost
        assert measured["document"]["steps"][0]["recommendation"]["decision"] is not None
        return
    assert caches == ["cold", "artifacts", "warm"], measured["log"][-2000:]
    assert cost["artifacts_bytes"] > 1000 and "artifacts_absent" not in cost
    loaded = variant["processes"][1]["compile_wall_s"]
    assert cost["artifacts_wall_s"] == loaded > 0
    assert "from the cache artifacts" in measured["log"]
    recommendation = measured["document"]["steps"][0]["recommendation"]
    if recommendation.get("break_even_steps") and variant["payoff"]["speedup"]["estimate"] > 1:
        assert variant["payoff"]["artifacts_break_even_steps"] is not None


def test_one_more_process_compiles_only_the_repeated_blocks(measured: dict) -> None:
    regional = measured["variant"]["regional"]
    assert regional.get("absent") is None, regional
    assert regional["blocks"] == {"name": "blocks", "count": 2, "class_name": "Block"}
    assert regional["compile_wall_s"] > 0
    assert regional["eager_ms"] > 0 and regional["compiled_ms"] > 0
    processes = measured["document"]["steps"][0]["settings"]["variant_processes"]
    assert len(measured["variant"]["processes"]) == processes  # in no sample of the variant's
    assert "variant default: regional compilation" in measured["log"]
