"""A process's part of a child's report (`eager`, `variant`) is typed once at the parent's
door (results/process_report.py, run/child_runs.py): the recorders read attributes, and a
part of another shape (the child runs the user's code, which can write anything there) is
one line naming the field, that variant's or step's error, never a traceback and never a
KeyError from deep inside a recorder."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from test_orchestrate import StandInLauncher, run
from test_result import child_output, timed

from compilegate.child.protocol import ChildReport, ChildSpec
from compilegate.report.child_failure_words import said_error
from compilegate.results.process_report import ProcessReport, ProcessReportError, numerics_of
from compilegate.run.child_process import ChildOutcome
from compilegate.schemas import validation_errors


def variant_part() -> dict[str, Any]:
    return copy.deepcopy(child_output(10.0, 5.0)["variant"])


def test_a_part_reads_as_attributes() -> None:
    part = variant_part() | {"cpus": [0, 1], "phases_s": {"timed": 2.5}, "late_recompile_s": 0.5}
    typed = ProcessReport.from_json(part, "variant")
    compiled = typed.side("compiled")
    assert compiled.samples_ms == tuple(part["timed"]["compiled"]["samples"])
    assert compiled.rounds == tuple(part["timed"]["compiled"]["rounds"])
    assert (typed.cpus, dict(typed.phases_s or {})) == ((0, 1), {"timed": 2.5})
    assert typed.warmup_s == tuple(part["warmup_s"]) and typed.late_recompile_s == 0.5
    assert typed.non_finite == () and typed.step_work is None
    with pytest.raises(ProcessReportError, match=r"^timed\.yardstick: not reported"):
        typed.side("yardstick")


def _set(path: str, value: Any) -> dict[str, Any]:
    part = variant_part()
    *parents, last = path.split(".")
    node = part
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return part


@pytest.mark.parametrize(
    ("part", "said"),
    [
        ([1, 2], "variant is not a JSON object"),
        (_set("timed.compiled.samples", "fast"),
         "variant.timed.compiled.samples is not a list of numbers"),
        (_set("timed.compiled.samples", [[[[1.0]]]]),
         "variant.timed.compiled.samples is not a list of numbers"),
        (_set("timed.compiled.samples", [True, 1.0]),
         "variant.timed.compiled.samples is not a list of numbers"),
        (_set("timed.eager.rounds", [0]), "variant.timed.eager: 40 samples but 1 rounds"),
        (_set("timed.eager.rounds", [-1] * 40),
         "variant.timed.eager.rounds is not a list of integers >= 0"),
        (_set("timed.compiled", None), "variant.timed.compiled is not a JSON object"),
        (_set("timed.forged", {"samples": [], "rounds": []}), "variant.timed: unknown side forged"),
        (_set("timed", []), "variant.timed is not a JSON object"),
        (_set("forged_key", 1), "variant: unknown key forged_key"),
        (_set("a\nkey\r\nover lines", 1), "variant: unknown key a key over lines"),
        (_set("peak_bytes", -5), "variant.peak_bytes is not an integer >= 0"),
        (_set("peak_bytes", "a lot"), "variant.peak_bytes is not an integer >= 0"),
        (_set("warmup_s", {"a": 1}), "variant.warmup_s is not a list of numbers"),
        (_set("cpus", [0.5]), "variant.cpus is not a list of integers >= 0"),
        (_set("phases_s", {"timed": "long"}), "variant.phases_s is not an object of seconds"),
        (_set("late_recompile_s", "0.5"), "variant.late_recompile_s is not a number"),
        (_set("compile", "fast"), "variant.compile is not a JSON object"),
        (_set("torch_state", []), "variant.torch_state is not a JSON object"),
        (_set("torch_state", {}), "variant.torch_state: not a TorchState: "),
    ],
)  # fmt: skip
def test_a_part_of_another_shape_names_its_first_wrong_field(part: Any, said: str) -> None:
    with pytest.raises(ProcessReportError) as info:
        ProcessReport.from_json(part, "variant")
    message = str(info.value)
    assert message.startswith(said) and "\n" not in message


def test_a_part_holding_nan_is_set_apart_with_where() -> None:
    """The run records a NaN as the measurement's error (run/child_failure.not_finite), so the
    door keeps only where it is and types nothing else of that part."""
    part = _set("timed.compiled.samples", [1.0, float("nan")])
    typed = ProcessReport.from_json(part, "variant")
    assert typed.non_finite == (("timed.compiled.samples[1]", "NaN"),)
    assert typed.timed == {}


def test_the_numerics_are_typed_at_the_door_with_nan_distances_null() -> None:
    nan = float("nan")
    worst = [{"tensor": "loss", "kind": "loss", "rmse_compiled": nan, "cosine": 1.0}]
    numerics = numerics_of({"status": "fail", "worst": worst})
    assert numerics is not None and numerics.worst is not None
    assert numerics.worst[0].rmse_compiled is None and numerics.worst[0].cosine == 1.0
    assert numerics_of(None) is None
    with pytest.raises(ProcessReportError, match=r"^numerics\.worst is not a list of JSON"):
        numerics_of({"status": "fail", "worst": ["loss"]})
    with pytest.raises(ProcessReportError, match=r"^numerics: not a Numerics: "):
        numerics_of({"worst": []})


class MalformedVariantLauncher(StandInLauncher):
    """A stand-in whose variant `b`'s child writes a sample list that is no list of numbers,
    and whose second step's eager child adds a key no process sends."""

    def run(self, spec: ChildSpec, *, label: str, timeout_s: float, env_opt_in=(), cache_dir=None):
        outcome = super().run(
            spec, label=label, timeout_s=timeout_s, env_opt_in=env_opt_in, cache_dir=cache_dir
        )
        report = outcome.report
        if label == "first/b" and report is not None:
            raw = report.to_json()
            raw["variant"]["timed"]["compiled"]["samples"] = "fast"
            return ChildOutcome(ChildReport.from_json(raw), None)
        if label.startswith("second/eager") and report is not None:
            raw = report.to_json()
            raw["eager"]["forged"] = {"samples": [1.0]}
            return ChildOutcome(ChildReport.from_json(raw), None)
        return outcome


def test_a_malformed_part_is_that_variants_one_line_error_and_the_run_goes_on(tmp_path) -> None:
    document = run(tmp_path, MalformedVariantLauncher())
    first, second = document["steps"]
    a, b, c = first["variants"]
    assert a["status"] == "ok" and c["status"] == "ok", "the others still ran"
    assert b["status"] == "error"
    assert said_error(b) == (
        "child process wrote a result the parent cannot read: "
        "variant.timed.compiled.samples is not a list of numbers"
    )
    assert b["error"] == "variant.timed.compiled.samples is not a list of numbers"
    assert b["failure"]["cause"] == "bad_result"
    assert second["status"] == "error"
    assert said_error(second) == (
        "eager: child process wrote a result the parent cannot read: eager: unknown key forged"
    )
    assert validation_errors(document, "result") == []


def test_timed_samples_reach_the_document_as_the_child_sent_them(tmp_path) -> None:
    document = run(tmp_path, StandInLauncher())
    eager = document["steps"][0]["eager"]
    assert eager["processes"][0]["samples_ms"]["eager"] == timed(10)["samples"]


class ForgedCompileRecordLauncher(StandInLauncher):
    """A stand-in whose variant `a`'s child writes a compile record of other types."""

    def run(self, spec: ChildSpec, *, label: str, timeout_s: float, env_opt_in=(), cache_dir=None):
        outcome = super().run(
            spec, label=label, timeout_s=timeout_s, env_opt_in=env_opt_in, cache_dir=cache_dir
        )
        if label == "first/a" and outcome.report is not None:
            raw = outcome.report.to_json()
            raw["variant"]["compile"] = {
                "call_s": "soon",
                "cpu_method": {"<b>": 1},
                "cache_hits": "lots",
                "counts": {"graphs": "many", "guards": 7},
                "window": {"wall_s": [3.0], "cpu_s": 2.0},
            }
            return ChildOutcome(ChildReport.from_json(raw), None)
        return outcome


def test_a_compile_record_of_other_types_reads_as_no_values_and_the_document_stays_valid(
    tmp_path,
) -> None:
    """The compile record is read leniently (a value of another type is no value), now at
    the door for every value: before, `call_s` and the counts went into the document as the
    child wrote them, and the result no longer passed its own schema."""
    document = run(tmp_path, ForgedCompileRecordLauncher())
    a = document["steps"][0]["variants"][0]
    assert a["status"] == "ok", a["error"]
    assert a["compile_call_s"] is None and a["compile_cost"].get("cpu_method") is None
    assert a["compile_cost"]["counts"]["graphs"] is None
    assert a["compile_cost"]["counts"]["guards"] == 7
    assert validation_errors(document, "result") == []
