"""Result assembly, recommendation and the printed table, from synthetic child outputs."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from gate_docs import result as result_doc
from gate_docs import step as step_doc

from compilegate.config import Variant
from compilegate.config.loading import load_config_file
from compilegate.report.child_failure_words import failure_text
from compilegate.report.decision_words import decision_sentence
from compilegate.report.run_text import render_run_text
from compilegate.results.document import (
    add_process,
    eager_entry,
    finish_step,
    new_document,
    variant_entry,
    write_document,
)
from compilegate.results.model import Environment, parse, part_of
from compilegate.results.process_report import ProcessReport, numerics_of
from compilegate.results.recommendation import recommend
from compilegate.results.step_record import StepRecord, failed_variant
from compilegate.run.child_failure import not_finite
from compilegate.schemas import validation_errors

ENV = {
    "torch": "2.13.0+cpu",
    "device": "cpu",
    "gpu_name": None,
    "python": "3.11.7",
    "cpu_count": 2,
    "inductor_cache": "fresh",
}
ENVIRONMENT = part_of(Environment, ENV)  # as the run reads the probe's report


def timed(median_ms: float, n: int = 40, rounds: int = 4, seed: int = 0) -> dict:
    rng = random.Random(seed)
    return {
        "samples": [median_ms * rng.uniform(0.98, 1.02) for _ in range(n)],
        "rounds": [i * rounds // n for i in range(n)],
    }


def child_output(eager_ms: float, compiled_ms: float, compile_s: float = 20.0) -> dict:
    return {
        "variant": {
            "warmup_s": [compile_s + 0.01, 0.01, 0.01],
            "eager_warmup_s": [0.01, 0.01, 0.01],
            "timed": {
                "eager": timed(eager_ms, seed=1),
                "eager_b": timed(eager_ms, seed=2),
                "compiled": timed(compiled_ms, seed=3),
            },
            "peak_bytes": None,
            "eager_peak_bytes": None,
        },
        "diagnostics": {
            "recompiles": {"count": 0, "events": [], "limit_hit": False},
            "graph_breaks": {"count": 0, "sites": []},
            "fallbacks_to_eager": 0,
            "fallback_reasons": [],
            "degraded": [],
        },
    }


def typed(part: dict, where: str = "variant") -> ProcessReport:
    """A process's part of a child's report, typed as the run's door types it."""
    return ProcessReport.from_json(part, where)


def parts(child: dict) -> tuple:
    """A child's report as the recorder reads it: what it measured and its numerics (typed
    at the door), its diagnostics."""
    return typed(child["variant"]), child.get("diagnostics"), numerics_of(child.get("numerics"))


def make_record(tmp_path: Path, settings: str = "") -> StepRecord:
    """A step as the run records it: eager measured, one variant measured, one timed out."""
    cfg = tmp_path / "compilegate.yml"
    cfg.write_text(
        f"version: 1\nsteps:\n  - name: s\n    entry: a.py:f\n{settings}    variants:\n"
        "      - {mode: default}\n      - {mode: default, dynamic: true}\n"
    )
    step = load_config_file(cfg).steps[0]
    record = StepRecord(step, device="cpu")
    record.eager = eager_entry(
        typed(
            {
                "warmup_s": [0.1],
                "peak_bytes": None,
                "timed": {"eager": timed(10), "eager_b": timed(10, seed=9)},
            },
            "eager",
        )
    )
    fast = variant_entry(step.variants[0], *parts(child_output(10.0, 5.0)))
    broken = failed_variant(
        step.variants[1], "timed out: used 601 CPU-s (timeout_s 600) in 912 s while numerics"
    )
    record.variants = [fast, broken]
    return record


def document_of(tmp_path: Path, record: StepRecord) -> dict:
    doc = new_document(ENVIRONMENT, str(tmp_path / "compilegate.yml"), "abc").to_json()
    doc["steps"].append(record.to_json())
    return doc


def make_document(tmp_path: Path) -> dict:
    record = make_record(tmp_path)
    doc = document_of(tmp_path, record)
    doc["steps"][0]["recommendation"] = recommend(record.as_step().variants).to_json(
        as_recorded=True
    )
    return doc


def test_document_is_schema_valid_and_round_trips(tmp_path: Path) -> None:
    doc = make_document(tmp_path)
    assert validation_errors(doc, "result") == []
    out = tmp_path / "sub" / "result.json"
    write_document(doc, out)
    assert json.loads(out.read_text()) == doc
    assert not [p for p in out.parent.iterdir() if p.name != "result.json"], "no temp files left"


def test_variant_numbers(tmp_path: Path) -> None:
    variant = make_document(tmp_path)["steps"][0]["variants"][0]
    assert (
        1.9
        < variant["speedup"]["ci_low"]
        <= variant["speedup"]["median"]
        <= variant["speedup"]["ci_high"]
        < 2.1
    )
    assert abs(variant["compile_s"] - 20.0) < 1e-6
    assert 3500 < variant["break_even_steps"] < 4500  # 20 s / 5 ms saved
    assert variant["noise_pct"] < 3


def test_the_document_recommends_the_variant_that_pays_off(tmp_path: Path) -> None:
    advice = make_document(tmp_path)["steps"][0]["recommendation"]
    assert advice["decision"] == "compile" and advice["variant"] == "default"
    assert advice["steps_per_run"] == 10_000
    assert 3500 < advice["break_even_steps"]["estimate"] < 4500  # 20 s / 5 ms saved


def test_table_shows_speedup_error_and_recommendation(tmp_path: Path) -> None:
    text = render_run_text(parse(make_document(tmp_path), "result.json"))
    assert "step s (cpu)" in text
    assert re.search(r"^  default\+dynamic +failed", text, re.M), text
    assert "default+dynamic: failed: timed out: used 601 CPU-s (timeout_s 600)" in text


# What a run records of the timed-out variant's child (run/child_failure.py's record).
TIMED_OUT_IN_NUMERICS = {"cause": "timed_out", "phase": "numerics"}


def with_failure(doc: dict, failure: dict | None = TIMED_OUT_IN_NUMERICS) -> dict:
    """`doc` with its failed variant's recorded failure (None: as documents before it)."""
    broken = doc["steps"][0]["variants"][1]
    broken.pop("failure", None)
    if failure is not None:
        broken["failure"] = failure
    return doc


def test_the_verdict_names_the_variants_that_failed_first_and_last(tmp_path: Path) -> None:
    doc = with_failure(make_document(tmp_path))
    text = render_run_text(parse(doc, "result.json"), width=100)
    first = "→ s: 1 of 2 variants failed (default+dynamic: timed out while numerics); compile with"
    assert text.startswith(first), text
    lines = text.splitlines()
    wrapped = next(i for i, line in enumerate(lines[1:], 1) if not line.startswith("  "))
    assert lines[-wrapped:] == lines[:wrapped], "the last lines repeat the verdict"


def test_a_failed_variant_is_named_by_its_recorded_cause_not_its_words(tmp_path: Path) -> None:
    """The verdict line reads the failure's fields: words that say another cause or phase
    change nothing; a document written before they were recorded says its error as
    recorded."""
    doc = with_failure(make_document(tmp_path))
    assert validation_errors(doc, "result") == []
    doc["steps"][0]["variants"][1]["error"] = "child process crashed while compiling: reworded"
    text = render_run_text(parse(doc, "result.json"), width=100)
    assert "(default+dynamic: timed out while numerics)" in text.splitlines()[0]
    older = with_failure(doc, None)  # an older document: its sentence, as recorded
    text = render_run_text(parse(older, "result.json"), width=200)
    assert "(default+dynamic: child process crashed while compiling: reworded)" in text


def test_variant_ids_are_stable() -> None:
    assert (
        Variant.from_dict({"mode": "reduce-overhead", "compile": "step"}).id
        == "reduce-overhead+step"
    )


def test_every_process_leaves_a_record_of_its_fastest_iterations(tmp_path: Path) -> None:
    from compilegate.results.document import add_process, finish_step

    record = make_record(tmp_path)
    variant = record.variants[0]
    first = variant.processes[0]
    compiled = child_output(10.0, 5.0)["variant"]["timed"]["compiled"]["samples"]
    assert first.fastest_ms.compiled == min(compiled)
    assert list(first.samples_ms["compiled"]) == compiled
    variant = add_process(variant, typed(child_output(10.0, 5.5)["variant"]))  # timing only
    assert len(variant.processes) == 2
    record.variants[0] = variant
    record.summarize(finish_step(record.as_step()))
    step_doc = record.to_json()
    # eager: the reference process and both of the variant's; compiled and speedup: two
    noise = step_doc["variants"][0]["compiled_process_noise_pct"]
    assert 0 < step_doc["process_noise_pct"] < noise
    assert step_doc["variants"][0]["speedup_process_noise_pct"] > 0
    assert validation_errors(document_of(tmp_path, record), "result") == []


def test_one_process_gives_no_process_noise(tmp_path: Path) -> None:
    from compilegate.results.document import finish_step

    record = make_record(tmp_path)
    record.summarize(finish_step(record.as_step()))
    step_doc = record.to_json()
    assert step_doc["variants"][0]["compiled_process_noise_pct"] is None
    assert step_doc["process_noise_pct"] is not None  # eager reference + the variant's eager


def test_write_document_refuses_nan_naming_the_key_and_keeps_the_old_file(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    write_document({"steps": []}, out)
    with pytest.raises(ValueError, match=r"NaN at steps\[0\]\.speedup\.median is not a finite"):
        write_document({"steps": [{"speedup": {"median": float("nan")}}]}, out)
    assert json.loads(out.read_text()) == {"steps": []}
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_a_nan_measurement_becomes_an_error_that_says_where() -> None:
    assert not_finite(typed({"peak_bytes": 1, "late_recompile_s": 1.2})) is None
    samples = {"samples": [1.0, float("nan")], "rounds": [0, 0]}
    part = {"late_recompile_s": float("inf"), "timed": {"eager": samples}}
    failure = not_finite(typed(part, "eager"), "eager.")
    assert failure is not None and failure_text(failure) == (
        "the measurement produced Infinity at eager.late_recompile_s (and 1 more), "
        "not a finite number"
    )


def test_failed_diagnostics_are_explicit_nulls_and_nan_numerics_distances_are_null() -> None:
    variant = Variant.from_dict({"mode": "default"})
    child = child_output(10.0, 5.0)
    child["diagnostics"] = {"degraded": ["compile diagnostics failed: KeyError: 'x'"]}
    child["numerics"] = {
        "status": "fail",
        "worst": [{"tensor": "loss", "kind": "loss", "rmse_compiled": float("nan"), "cosine": 1.0}],
    }
    typed_entry = variant_entry(variant, *parts(child))
    entry = typed_entry.to_json(as_recorded=True)
    assert (entry["graph_breaks"], entry["recompiles"], entry["fallbacks_to_eager"]) == (
        None,
        None,
        None,
    )
    assert entry["numerics"]["worst"][0]["rmse_compiled"] is None
    assert entry["numerics"]["worst"][0]["cosine"] == 1.0
    assert not_finite(typed_entry) is None


def test_the_document_records_every_declared_step() -> None:
    doc = new_document(ENVIRONMENT, "compilegate.yml", "abc", ("a", "b")).to_json()
    assert doc["declared_steps"] == ["a", "b"]
    assert validation_errors(doc, "result") == []


def test_diagnostics_cannot_overwrite_what_was_measured() -> None:
    variant = Variant.from_dict({"mode": "default"})
    child = child_output(10.0, 5.0)
    honest = variant_entry(variant, *parts(child)).to_json(as_recorded=True)
    child["diagnostics"] = {
        **child["diagnostics"],
        "speedup": {"median": 99.0},
        "status": "ok",
        "step_ms": {"median": 0.001},
    }
    entry = variant_entry(variant, *parts(child)).to_json(as_recorded=True)
    assert entry["speedup"] == honest["speedup"] and entry["step_ms"] == honest["step_ms"]
    # the refused keys as a fact of their own (issue 53): report/degraded_words.py says them
    assert entry["refused_diagnostics"] == ["speedup", "status", "step_ms"]
    assert not any(" " in reason for reason in entry.get("degraded") or ())
    assert validation_errors(result_doc(step_doc("mlp", variants=[entry])), "result") == []


def test_finish_step_gives_each_variant_the_payoff_the_decision_quotes(tmp_path: Path) -> None:
    """Issue 15 item 8: the decision quoted one speedup (a row's 1.40x, 95 % CI 1.11-1.77)
    and decided on another (each process's fastest iteration). Now the recommendation, the
    variant's `payoff` and its `break_even_steps` are one set of numbers, from every
    process, against the step's steps_per_run."""
    record = make_record(tmp_path, "    steps_per_run: 50000\n")
    fast = record.variants[0]
    for seed in (4, 5, 6):
        later = child_output(10.0, 5.2)["variant"]
        later["timed"]["compiled"] = timed(5.2, seed=seed)
        fast = add_process(fast, typed(later))
    record.variants[0] = fast
    record.summarize(finish_step(record.as_step()))
    doc = document_of(tmp_path, record)
    step_doc = doc["steps"][0]
    advice, payoff = step_doc["recommendation"], step_doc["variants"][0]["payoff"]
    fast_doc = step_doc["variants"][0]
    assert advice["decision"] == payoff["decision"] == "compile"
    said = decision_sentence(parse(doc, "result.json").steps[0])
    assert advice["steps_per_run"] == 50_000 and "a 50,000-step run" in str(said)
    assert advice["speedup"] == payoff["speedup"]
    assert advice["speedup"]["estimator"] == "mean_over_processes" and advice["processes"] == 4
    assert fast_doc["break_even_steps"] == advice["break_even_steps"]["estimate"]
    assert f"{advice['speedup']['estimate']:.2f}×" in str(said)
    assert validation_errors(doc, "result") == []


STEP_WORK = {
    "counts": {
        "aten_ops": 126,
        "compiled_region_calls": 0,
        "kernels": None,
        "cuda_graph_replays": None,
        "host_syncs": 0,
        "flops": 71680,
        "allocations": 21,
        "allocated_bytes": 15644,
    },
    "absent": {"kernels": "on the CPU …", "cuda_graph_replays": "CUDA graphs exist only on CUDA"},
    "top": {"aten_ops": [["aten::resolve_conj", 20], ["aten::mm", 6]]},
    "batch_index": 3,
}


def test_the_first_processes_step_work_goes_into_the_document_as_it_came(tmp_path: Path) -> None:
    """Eager's from the eager reference, a variant's from its first process; a later, timing
    process has none and changes nothing; a child without it leaves the key out."""
    doc = make_document(tmp_path)
    step_doc = doc["steps"][0]
    assert "step_work" not in step_doc["eager"] and "step_work" not in step_doc["variants"][0]
    declared = load_config_file(tmp_path / "compilegate.yml").steps[0].variants[0]
    compiled_work = {**STEP_WORK, "counts": {**STEP_WORK["counts"], "aten_ops": 40}}
    measured = {
        "warmup_s": [0.1],
        "peak_bytes": None,
        "timed": {"eager": timed(10), "eager_b": timed(10, seed=9)},
        "step_work": STEP_WORK,
    }
    step_doc["eager"] = eager_entry(typed(measured, "eager")).to_json(as_recorded=True)
    child = child_output(10.0, 5.0)
    child["variant"]["step_work"] = compiled_work
    variant = variant_entry(declared, *parts(child))
    later = typed(child_output(10.0, 5.0)["variant"])
    variant = add_process(variant, later).to_json(as_recorded=True)
    step_doc["variants"][0] = variant
    assert step_doc["eager"]["step_work"] == STEP_WORK
    assert variant["step_work"] == compiled_work
    assert validation_errors(doc, "result") == []
    parsed = parse(doc, "result.json")
    assert parsed.steps[0].variants[0].step_work.counts.aten_ops == 40
