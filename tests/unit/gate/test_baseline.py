"""Reading result/baseline documents strictly, and updating a baseline atomically."""

from __future__ import annotations

import json

import pytest
from gate_docs import (
    environment,
    merge_documents,
    process,
    result,
    step,
    variant,
    with_processes,
)

from compilegate.errors import EXIT_USAGE, BaselineError
from compilegate.gate.baseline import update_baseline
from compilegate.gate.documents import check_result_document, read_result_document
from compilegate.report.baseline_update_words import baseline_update_summary, kept_variant_words


def write(path, document):
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def names(document):
    return [s["name"] for s in document["steps"]]


def test_reads_a_valid_document(tmp_path):
    path = write(tmp_path / "baseline.json", result())
    assert read_result_document(path, role="baseline")["steps"][0]["name"] == "train"


def recorded_before_compile_cost() -> dict:
    """A baseline an earlier compilegate wrote: no compile_cost, no torch_state."""
    document = result()
    for variant_doc in document["steps"][0]["variants"]:
        del variant_doc["compile_cost"], variant_doc["torch_state"]
    return document


def test_a_baseline_from_before_compile_cost_is_still_a_baseline(tmp_path):
    path = write(tmp_path / "baseline.json", recorded_before_compile_cost())
    assert read_result_document(path, role="baseline")["steps"][0]["name"] == "train"


def test_a_result_must_carry_compile_cost(tmp_path):
    path = write(tmp_path / "result.json", recorded_before_compile_cost())
    with pytest.raises(BaselineError, match="'compile_cost' is a required property"):
        read_result_document(path, role="result")


def test_an_old_baseline_tolerates_only_the_keys_it_could_not_know(tmp_path):
    document = recorded_before_compile_cost()
    del document["steps"][0]["variants"][0]["compile_s"]
    path = write(tmp_path / "baseline.json", document)
    with pytest.raises(BaselineError) as raised:
        read_result_document(path, role="baseline")
    assert str(raised.value).endswith("'compile_s' is a required property")


def test_missing_file_names_the_file(tmp_path):
    path = tmp_path / "nope.json"
    with pytest.raises(BaselineError) as err:
        read_result_document(path, role="baseline")
    assert str(err.value) == f"{path}: baseline file not found"
    assert err.value.exit_code == EXIT_USAGE


def test_corrupt_json_names_file_line_and_column(tmp_path):
    path = tmp_path / "baseline.json"
    path.write_text('{\n  "schema_version": 1,\n  "steps": [,]\n}\n', encoding="utf-8")
    with pytest.raises(BaselineError) as err:
        read_result_document(path, role="baseline")
    message = str(err.value)
    assert message.startswith(f"{path}: baseline is not valid JSON")
    assert "line 3, column 13" in message
    assert "\n" not in message


def test_schema_violation_names_the_json_path(tmp_path):
    doc = result()
    del doc["steps"][0]["variants"][0]["status"]
    path = write(tmp_path / "baseline.json", doc)
    with pytest.raises(BaselineError) as err:
        read_result_document(path, role="baseline")
    message = str(err.value)
    assert message.startswith(f"{path}: not a valid compilegate baseline document")
    assert "steps[0].variants[0]" in message and "'status' is a required property" in message
    assert err.value.exit_code == EXIT_USAGE


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_number_json_does_not_have_is_rejected_naming_its_key_path(tmp_path, token):
    text = json.dumps(result()).replace('"median": 1.25', f'"median": {token}', 1)
    assert token in text
    path = tmp_path / "result.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BaselineError) as err:
        read_result_document(path)
    message = str(err.value)
    assert message.startswith(f"{path}: not a valid compilegate result document")
    assert "at steps[0].variants[0].speedup.median:" in message
    assert "not a finite number" in message and "\n" not in message
    assert err.value.exit_code == EXIT_USAGE


def test_a_document_in_memory_is_checked_the_same_way():
    doc = result()
    doc["steps"][0]["variants"][0]["speedup"]["median"] = float("nan")
    with pytest.raises(BaselineError, match=r"^run\.json: .*speedup\.median: NaN is not a finite"):
        check_result_document(doc, "run.json")
    check_result_document(result(), "run.json")


@pytest.mark.parametrize(
    "key", ["speedup", "step_ms", "compile_s", "graph_breaks", "recompiles", "fallbacks_to_eager"]
)
def test_an_ok_variant_without_its_measurements_is_rejected(tmp_path, key):
    doc = result()
    del doc["steps"][0]["variants"][0][key]
    path = write(tmp_path / "result.json", doc)
    with pytest.raises(BaselineError) as err:
        read_result_document(path)
    assert f"at steps[0].variants[0]: '{key}' is a required property" in str(err.value)


def test_a_failed_variant_needs_no_measurements_and_failed_diagnostics_are_explicit_nulls():
    doc = result(step(variants=[variant("a", status="error", error="boom"), variant("b")]))
    doc["steps"][0]["variants"][1].update(
        graph_breaks=None,
        recompiles=None,
        fallbacks_to_eager=None,
        degraded=["compile diagnostics failed: KeyError: 'x'"],
    )
    check_result_document(doc, "result.json")


def test_an_ok_step_without_its_eager_measurement_is_rejected():
    doc = result()
    doc["steps"][0]["eager"] = None
    with pytest.raises(BaselineError, match=r"at steps\[0\]\.eager: None is not of type 'object'"):
        check_result_document(doc, "result.json")


def test_wrong_schema_version_is_rejected(tmp_path):
    path = write(tmp_path / "result.json", result() | {"schema_version": 2})
    with pytest.raises(BaselineError, match=r"result\.json: not a valid compilegate result.*"):
        read_result_document(path)


def test_duplicate_step_names_are_rejected(tmp_path):
    path = write(tmp_path / "baseline.json", result(step("a"), step("a")))
    with pytest.raises(BaselineError, match=r"steps\[1\]\.name: duplicate step name 'a'"):
        read_result_document(path, role="baseline")


def test_a_directory_is_not_a_document(tmp_path):
    with pytest.raises(BaselineError, match="found a directory"):
        read_result_document(tmp_path, role="baseline")


def test_update_creates_the_baseline_from_the_result(tmp_path):
    res = write(tmp_path / "result.json", result(step("a"), step("b")))
    target = tmp_path / "nested" / "baseline.json"
    update = update_baseline(res, target)
    written, source = json.loads(target.read_text()), json.loads(res.read_text())
    history = [step.pop("history") for step in written["steps"]]
    assert written == source
    assert history == [[], []]  # no process records: nothing the history could keep
    assert update.added == ("a", "b")
    assert "2 added (a, b)" in baseline_update_summary(update)


def test_update_replaces_rerun_steps_and_keeps_the_others(tmp_path):
    old = result(step("a", eager_ms=10.0), step("b"), created_at="2026-01-01T00:00:00+00:00")
    new_env = environment(torch="2.11.0")
    # `a` is still declared, left out of this run with --step
    new = result(step("b", eager_ms=20.0), step("c"), env=new_env, declared_steps=["a", "b", "c"])
    target = write(tmp_path / "baseline.json", old)
    update = update_baseline(write(tmp_path / "result.json", new), target)
    merged = json.loads(target.read_text())
    assert names(merged) == ["a", "b", "c"]
    assert merged["steps"][1]["eager"]["step_ms"]["median"] == 20.0  # replaced by the new run
    assert merged["steps"][0] == old["steps"][0]  # not re-run: kept as it was
    assert merged["environment"]["torch"] == "2.11.0"
    assert merged["created_at"] == new["created_at"]
    assert (update.replaced, update.added, update.kept) == (("b",), ("c",), ("a",))
    read_result_document(target, role="baseline")  # still a valid baseline


def test_a_failed_step_does_not_replace_a_good_baseline(tmp_path):
    target = write(tmp_path / "baseline.json", result(step("a")))
    failed = result(step("a", status="error", error="boom", variants=[]))
    update = update_baseline(write(tmp_path / "result.json", failed), target)
    assert json.loads(target.read_text())["steps"][0]["status"] == "ok"
    assert update.kept_over_error == ("a",)


def test_steps_from_another_gpu_are_dropped_not_relabelled():
    """Merged into one file (merge_into_baseline, as a caller that names the file does), a
    result from another machine drops the old machine's steps it did not rerun."""
    old = result(step("a"), step("b"), env=environment(gpu_name="NVIDIA A100"))
    merged, update = merge_documents(old, result(step("b"), declared_steps=["a", "b"]))
    assert names(merged) == ["b"]
    assert update.dropped == ("a",) and "NVIDIA A100" in baseline_update_summary(update)


def test_a_result_of_another_hardware_class_gets_its_own_baseline_file(tmp_path):
    """`baseline update` keeps a baseline per hardware class: an H200 result beside an
    A100 baseline goes into the H200 class's own file; the A100's is left as it was, and
    the next H200 result merges into the H200 file (its history grows there)."""
    a100 = result(step("a"), step("b"), env=environment(gpu_name="NVIDIA A100"))
    target = write(tmp_path / "baseline.json", a100)
    before = target.read_text()
    timed = with_processes(
        step("b"), [process([10.0] * 5) for _ in range(4)],
        [[process([10.0] * 5, [8.0] * 5) for _ in range(4)]],
    )  # fmt: skip
    h200 = write(tmp_path / "result.json", result(timed))
    update = update_baseline(h200, target)
    own = tmp_path / "baseline.cuda-nvidia-h200-x1.json"
    assert update.path == own and target.read_text() == before
    assert names(json.loads(own.read_text())) == ["b"]
    assert baseline_update_summary(update).startswith(
        f"{own}: baseline updated: 1 added (b); the baseline of hardware class "
        f"NVIDIA H200 ×1, kept beside {target}, which holds another class's (left as it was)"
    )
    again = update_baseline(h200, target)
    assert again.path == own and again.replaced == ("b",) and again.named == target
    (recorded,) = json.loads(own.read_text())["steps"]
    assert len(recorded["history"]) == 2
    # the A100 class still updates the named file it holds
    a100_again = write(tmp_path / "a100.json", a100)
    assert update_baseline(a100_again, target).path == target


def test_invalid_existing_baseline_is_an_error_and_left_alone(tmp_path):
    target = tmp_path / "baseline.json"
    target.write_text("{not json", encoding="utf-8")
    with pytest.raises(BaselineError, match=r"baseline\.json: baseline is not valid JSON"):
        update_baseline(write(tmp_path / "result.json", result()), target)
    assert target.read_text() == "{not json"


def test_invalid_result_is_an_error(tmp_path):
    res = write(tmp_path / "result.json", {"steps": []})
    with pytest.raises(BaselineError, match=r"result\.json: not a valid compilegate result"):
        update_baseline(res, tmp_path / "baseline.json")
    assert not (tmp_path / "baseline.json").exists()


def test_update_is_atomic_when_writing_fails(tmp_path, monkeypatch):
    old = result(step("a"))
    target = write(tmp_path / "baseline.json", old)
    before = target.read_text()
    res = write(tmp_path / "result.json", result(step("a", variants=[variant(speedup=2.0)])))

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(json, "dump", fail)
    with pytest.raises(BaselineError, match="cannot write baseline: No space left on device"):
        update_baseline(res, target)
    assert target.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["baseline.json", "result.json"]


def test_a_variant_that_failed_keeps_its_last_good_baseline(tmp_path):
    good = result(step(variants=[variant("a", speedup=1.5), variant("b", speedup=1.2)]))
    target = write(tmp_path / "baseline.json", good)
    flaky = result(
        step(variants=[variant("a", status="error", error="timed out"), variant("b", speedup=1.3)])
    )
    update = update_baseline(write(tmp_path / "result.json", flaky), target)
    variants = json.loads(target.read_text())["steps"][0]["variants"]
    assert [(v["id"], v["status"], v["speedup"]["median"]) for v in variants] == [
        ("a", "ok", 1.5),  # the last good baseline of a, kept
        ("b", "ok", 1.3),  # b replaced by this run's
    ]
    assert tuple(map(kept_variant_words, update.variants_kept)) == (
        "train/a (failed in this run: timed out)",
    )
    assert (
        "1 variant(s) kept from the previous baseline (train/a (failed"
        in baseline_update_summary(update)
    )
    read_result_document(target, role="baseline")


@pytest.mark.parametrize(
    ("incomplete", "why"),
    [
        (
            {"graph_breaks": None, "recompiles": None, "degraded": ["compile diagnostics failed"]},
            "its compile diagnostics failed",
        ),
        ({"numerics": {"status": "error", "reason": "boom"}}, "its numerics check errored"),
    ],
)
def test_an_incomplete_variant_keeps_its_last_complete_baseline(incomplete, why):
    old = result(step(variants=[variant(speedup=1.5)]))
    new = result(step(variants=[variant(speedup=1.4) | incomplete]))
    merged, update = merge_documents(old, new, tmp_path_stub())
    assert merged["steps"][0]["variants"][0]["speedup"]["median"] == 1.5
    assert tuple(map(kept_variant_words, update.variants_kept)) == (
        f"train/default ({why} in this run)",
    )


def test_a_failed_variant_replaces_the_baseline_when_the_step_config_changed():
    old = result(step(variants=[variant(speedup=1.5)]))
    changed = step(
        variants=[variant(status="error", error="boom")],
        settings={"warmup": 9},
        fingerprint="fp-2",
    )
    merged, update = merge_documents(old, result(changed), tmp_path_stub())
    assert merged["steps"][0]["variants"][0]["status"] == "error"
    assert update.variants_kept == ()


def test_a_variant_that_never_ran_well_stays_failed_in_the_baseline():
    old = result(step(variants=[variant(status="error", error="first")]))
    new = result(step(variants=[variant(status="error", error="second")]))
    merged, _ = merge_documents(old, new, tmp_path_stub())
    assert merged["steps"][0]["variants"][0]["error"] == "second"


def tmp_path_stub():
    from pathlib import Path

    return Path("baseline.json")


def test_a_variant_absent_from_a_cut_short_run_keeps_its_baseline():
    old = result(step(variants=[variant("a"), variant("b", speedup=1.7)]))
    cut_short = result(step(variants=[variant("a", speedup=1.3)]))  # same fingerprint
    merged, update = merge_documents(old, cut_short, tmp_path_stub())
    assert [v["id"] for v in merged["steps"][0]["variants"]] == ["a", "b"]
    assert merged["steps"][0]["variants"][0]["speedup"]["median"] == 1.3
    assert tuple(map(kept_variant_words, update.variants_kept)) == (
        "train/b (not in this run's result)",
    )


def test_a_variant_dropped_from_the_config_is_dropped_from_the_baseline():
    old = result(step(variants=[variant("a"), variant("b")], fingerprint="fp-ab"))
    new = result(step(variants=[variant("a")], fingerprint="fp-a"))
    merged, update = merge_documents(old, new, tmp_path_stub())
    assert [v["id"] for v in merged["steps"][0]["variants"]] == ["a"]
    assert update.variants_kept == ()


def test_a_step_deleted_from_the_config_leaves_the_baseline_and_one_left_out_stays():
    old = result(step(name="kept"), step(name="deleted"), step(name="left-out"))
    # the default branch's config now declares kept and left-out; this run measured kept only
    new = result(step(name="kept"), declared_steps=["kept", "left-out"])
    merged, update = merge_documents(old, new, tmp_path_stub())
    assert [s["name"] for s in merged["steps"]] == ["kept", "left-out"]
    assert update.no_longer_declared == ("deleted",)
    assert "1 dropped (no longer in the config) (deleted)" in baseline_update_summary(update)


def test_an_unsteady_run_is_recorded_with_its_times_marked_and_forced_vouched_for(tmp_path):
    """Issue 40: a busy runner's run was refused (exit 2, issue 22) though its counts,
    graph breaks, recompiles, numerics and memory do not depend on the load. It is
    recorded; each of its steps says why its times are not vouched for, and the line says
    what that means. --force vouches for them (no mark). Issue 28: a run whose speedup
    noise is more than twice its threshold is recorded with a note."""
    noisy = result(step("a"), step("b", status="error", error="boom"))
    noisy["steps"][0]["variants"][0]["speedup_process_noise_pct"] = 35.0
    noisy["run_health"] = {"unsteady": ["other processes took 61 % of its CPU"]}
    res = write(tmp_path / "result.json", noisy)
    target = tmp_path / "baseline.json"
    update = update_baseline(res, target)
    assert update.added == ("a", "b") and update.unsteady_steps == ("a",)
    stored = json.loads(target.read_text())
    assert stored["steps"][0]["unsteady_times"] == ["other processes took 61 % of its CPU"]
    assert "unsteady_times" not in stored["steps"][1]  # failed: no times to mark
    assert read_result_document(target, role="baseline")  # the schema knows the mark
    line = baseline_update_summary(update)
    assert "recorded a, but its step times were measured on an unsteady machine" in line
    assert "(other processes took 61 % of its CPU)" in line
    assert "will not judge speed until a steady run of baseline update replaces them" in line
    assert "--force vouches for the times" in line
    assert "a/default: its speedup by each process's fastest iterations" in line
    assert "has noise ±35 %, more than twice" in line
    forced = update_baseline(res, tmp_path / "forced.json", force=True)
    assert forced.unsteady_steps == () and "unsteady machine" not in baseline_update_summary(forced)
    assert "unsteady_times" not in json.loads((tmp_path / "forced.json").read_text())["steps"][0]
    # a steady run replaces the mark with its own times
    del noisy["run_health"]
    update = update_baseline(write(tmp_path / "steady.json", noisy), target)
    assert update.replaced == ("a", "b") and update.unsteady_steps == ()
    assert "unsteady_times" not in json.loads(target.read_text())["steps"][0]
    assert "inconclusive there" in baseline_update_summary(update)


def test_a_mark_a_result_carries_is_not_kept_and_a_kept_variant_keeps_its_mark(tmp_path):
    """The mark is the baseline's, from the recorded run's health: a steady result that
    carries one (a baseline passed as a result) is vouched for. A variant kept from a
    marked baseline (it failed in this run) keeps the mark: its times are that run's."""
    carried = result(step("a"))
    carried["steps"][0]["unsteady_times"] = ["forged"]
    update_baseline(write(tmp_path / "carried.json", carried), tmp_path / "b.json")
    assert "unsteady_times" not in json.loads((tmp_path / "b.json").read_text())["steps"][0]
    old = result(step("a"))
    old["steps"][0]["unsteady_times"] = ["load average 3.2 on 2 cores"]
    new = result(step("a", variants=[variant(status="error", error="crash")]))
    merged, update = merge_documents(old, new, tmp_path_stub())
    assert update.variants_kept and merged["steps"][0]["unsteady_times"] == [
        "load average 3.2 on 2 cores"
    ]


def test_a_wide_step_time_noise_does_not_refuse_a_baseline(tmp_path):
    """Issue 28: the first run on an idle H200 was refused for its eager step time noise
    (±11 %), which a stored baseline no longer gates on (the history's spread does)."""
    doc = result(step("a"))
    doc["steps"][0]["process_noise_pct"] = 11.0
    doc["steps"][0]["variants"][0]["compiled_process_noise_pct"] = 12.0
    res = write(tmp_path / "result.json", doc)
    assert update_baseline(res, tmp_path / "baseline.json").added == ("a",)
