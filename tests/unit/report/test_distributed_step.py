"""A distributed step (config `distributed`, child/distributed.py): its config read and its bad
values named in one line; the ranks' reports merged (the slowest rank's samples, the failing
rank named, the group's record on the variant); the record typed into the document and said
in words apart from graph breaks. The real ranks run in tests/integration/test_distributed.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_docs import judge_documents, result, step, variant
from test_config import GOOD, error_of, load

from compilegate.child.ranks import merge_reports, slowest
from compilegate.config import StepConfig
from compilegate.errors import EXIT_REGRESSION
from compilegate.report.absence_words import numerics_said
from compilegate.report.distributed_words import distributed_sentence
from compilegate.report.row_words import row_message
from compilegate.results.model import (
    DistributedRun,
    Numerics,
    NumericsStatus,
    RankRecord,
    Status,
    Step,
    Variant,
    part_of,
)
from compilegate.results.step_record import step_settings

DDP = "    iterations: 10\n    distributed: {wrapper: ddp, world_size: 2, bucket_cap_mb: 2}\n"


def small_step(text: str, tmp_path: Path) -> StepConfig:
    return load(GOOD.replace("    iterations: 10\n", text), tmp_path).steps[1]


def test_the_distributed_key_is_read_and_shares_the_budget(tmp_path: Path) -> None:
    step = small_step(DDP, tmp_path)
    assert step.distributed is not None
    assert (step.distributed.wrapper, step.distributed.world_size) == ("ddp", 2)
    assert step.distributed.bucket_cap_mb == 2 and step.distributed.backend is None
    assert step.processes_per_child == 2  # run/child_runs.py: timeout_s CPU seconds per rank
    assert step.measurement_settings()["distributed"]["world_size"] == 2
    assert step_settings(step)["distributed"]["wrapper"] == "ddp"


def test_a_one_process_step_keeps_its_fingerprint(tmp_path: Path) -> None:
    plain = small_step("    iterations: 10\n", tmp_path)
    explicit = small_step("    iterations: 10\n    distributed: null\n", tmp_path)
    assert plain.distributed is None and plain.processes_per_child == 1
    assert plain.fingerprint() == explicit.fingerprint()
    assert plain.fingerprint() != small_step(DDP, tmp_path).fingerprint()


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("{wrapper: ddp, world_size: 0}", "world_size"),
        ("{wrapper: horovod, world_size: 2}", "wrapper"),
        ("{wrapper: ddp}", "world_size"),
        ("{wrapper: ddp, world_size: 2, backend: mpi}", "backend"),
        ("{wrapper: ddp, world_size: 2, bucket_cap_mb: 0}", "bucket_cap_mb"),
        ("{wrapper: ddp, world_size: 2, collective_timeout_s: 1}", "collective_timeout_s"),
        ("{wrapper: ddp, world_size: 2, ranks: 3}", "ranks"),
    ],
)
def test_a_bad_distributed_value_is_one_line_naming_the_key(
    tmp_path: Path, text: str, named: str
) -> None:
    message = error_of(GOOD.replace("    iterations: 10\n", f"    distributed: {text}\n"), tmp_path)
    assert "\n" not in message and "compilegate.yml:" in message
    assert "distributed" in message and named in message


def test_levers_a_distributed_step_does_not_measure_are_refused(tmp_path: Path) -> None:
    message = error_of(GOOD.replace("    iterations: 10\n", DDP + "    regional: true\n"), tmp_path)
    assert "steps[1].distributed" in message and "regional" in message


def timed(*samples: float) -> dict[str, Any]:
    return {"samples": list(samples), "rounds": [0] * len(samples)}


def rank_report(rank: int, compiled: list[float], breaks: int = 1) -> dict[str, Any]:
    return {
        "status": "ok",
        "error": None,
        "device": "cpu",
        "variant": {"timed": {"compiled": timed(*compiled), "eager": timed(5.0, 5.0)}},
        "distributed": {
            "rank": rank,
            "ddp_splits": 3,
            "graph_breaks": breaks,
            "recompiles": 0,
            "compile_s": 10.0 + rank,
            "peak_bytes": None,
            "aten_ops": 149,
        },
    }


RAW = {"wrapper": "ddp", "world_size": 2, "bucket_cap_mb": 2.0}


def test_each_sample_is_the_slowest_ranks() -> None:
    merged = slowest([{"a": timed(1.0, 4.0, 2.0)}, {"a": timed(3.0, 1.0, 2.5)}])
    assert merged == {"a": {"samples": [3.0, 4.0, 2.5], "rounds": [0, 0, 0]}}


def test_the_ranks_merge_into_rank_zeros_report_with_the_groups_record() -> None:
    merged = merge_reports(
        [rank_report(0, [1.0, 2.0]), rank_report(1, [1.5, 1.0])], [0, 0], RAW, "cpu", None
    )
    assert merged["status"] == "ok"
    assert merged["variant"]["timed"]["compiled"]["samples"] == [1.5, 2.0]
    record = merged["variant"]["distributed"]
    assert (record["backend"], record["ddp_splits"]) == ("gloo", 3)
    assert [rank["graph_breaks"] for rank in record["ranks"]] == [1, 1]
    typed = part_of(DistributedRun, record)  # as results/document.variant_entry reads it
    assert typed.ranks[1] == RankRecord(1, "ok", None, 3, 1, 0, compile_s=11.0, aten_ops=149)
    assert typed.bucket_cap_mb == 2.0


def test_the_rank_that_failed_first_is_named_and_the_others_say_why_they_ended() -> None:
    failed = {"status": "error", "error": "eager warm-up: RuntimeError: boom", "phase": "x"}
    merged = merge_reports([None, failed], [-9, 0], RAW, "cpu", 1)
    assert merged["status"] == "error"
    assert merged["error"].startswith("rank 1 of 2: eager warm-up: RuntimeError: boom")
    ranks = merged["distributed"]["ranks"]
    assert ranks[0]["error"] == "ended after rank 1 failed"
    crashed = merge_reports([rank_report(0, [1.0]), None], [0, -11], RAW, "cpu", 1)
    assert crashed["error"] == "rank 1 of 2: ended without a report (exit code -11)"


def group(ranks: tuple[RankRecord, ...], splits: int | None = 3) -> DistributedRun:
    return DistributedRun(
        wrapper="ddp",
        world_size=2,
        backend="gloo",
        ranks=ranks,
        bucket_cap_mb=2.0,
        ddp_splits=splits,
    )


def step_with(run: DistributedRun | None) -> Step:
    variant = Variant(
        id="default", mode="default", compile_target="model", status=Status.OK, distributed=run
    )
    return Step(name="ddp", status=Status.OK, variants=(variant,))


def test_the_words_keep_a_split_apart_from_a_graph_break() -> None:
    same = (RankRecord(0, "ok", None, 3, 1, 0), RankRecord(1, "ok", None, 3, 1, 0))
    sentence = distributed_sentence(step_with(group(same)))
    assert sentence == (
        "DDP, 2 ranks over gloo, buckets of 2 MB: default 3 DDP splits at gradient-bucket "
        "boundaries (expected, not graph breaks); every rank 1 graph break, 0 recompiles"
    )
    timed_ranks = (
        RankRecord(0, "ok", None, 3, 1, 0, compile_s=12.14, aten_ops=149),
        RankRecord(1, "ok", None, 3, 1, 0, compile_s=12.61, aten_ops=151),
    )
    sentence = distributed_sentence(step_with(group(timed_ranks)))
    assert sentence is not None and sentence.endswith(
        "; cold compile 12.1–12.6 s across ranks; "
        "ATen ops of one compiled step differ: rank 0 149, rank 1 151"
    )
    same_compile = tuple(
        RankRecord(r, "ok", None, 3, 1, 0, compile_s=12.14, aten_ops=149) for r in range(2)
    )
    sentence = distributed_sentence(step_with(group(same_compile)))
    assert sentence is not None and sentence.endswith("; cold compile 12.1 s on every rank")
    differ = (RankRecord(0, "ok", None, 0, 1, 0), RankRecord(1, "ok", None, 0, 2, 0))
    sentence = distributed_sentence(step_with(group(differ, splits=0)))
    assert sentence is not None and "no DDP split" in sentence
    assert "rank 0: 1 graph break, 0 recompiles, rank 1: 2 graph breaks" in sentence
    assert distributed_sentence(step_with(None)) is None


def splits(count: int | None) -> dict[str, Any]:
    ranks = [{"rank": r, "status": "ok", "ddp_splits": count} for r in range(2)]
    return {
        "wrapper": "ddp",
        "world_size": 2,
        "backend": "gloo",
        "ranks": ranks,
        "ddp_splits": count,
    }


def gate_rows(base: dict[str, Any] | None, cur: dict[str, Any] | None) -> tuple[Any, dict]:
    def doc(record: dict[str, Any] | None) -> dict[str, Any]:
        extra = {} if record is None else {"distributed": record}
        return result(step(variants=[variant(**extra)]))

    report = judge_documents(doc(base), doc(cur))
    return report, {r.metric: r for r in report.verdicts if r.variant == "default"}


def test_more_ddp_splits_than_the_baseline_fail_and_are_never_called_graph_breaks() -> None:
    report, found = gate_rows(splits(2), splits(4))
    row = found["ddp_splits"]
    assert row.verdict == "regression" and report.exit_code == EXIT_REGRESSION
    assert row_message(row) == (
        "DDP splits at gradient-bucket boundaries 2 → 4 (allowed increase: 0)"
    )
    assert found["graph_break_sites"].verdict == "pass"
    assert gate_rows(splits(2), splits(2))[1]["ddp_splits"].verdict == "pass"
    assert gate_rows(splits(3), splits(1))[1]["ddp_splits"].verdict == "improvement"
    assert gate_rows(splits(3), splits(None))[1]["ddp_splits"].verdict == "missing"
    assert "ddp_splits" not in gate_rows(None, None)[1]  # a one-process step has no such row


def test_ranks_whose_parameters_differ_fail_the_numerics() -> None:
    reports = [rank_report(0, [1.0]), rank_report(1, [1.0])]
    for report, digest in zip(reports, ("aa", "aa")):
        report["distributed"]["parameters_sha256"] = digest
        report["numerics"] = {"status": "pass", "reason": None}
    agreed = merge_reports(reports, [0, 0], RAW, "cpu", None)
    assert agreed["distributed"]["ranks_agree"] is True
    assert agreed["numerics"]["status"] == "pass"
    reports[1]["distributed"]["parameters_sha256"] = "bb"
    differ = merge_reports(reports, [0, 0], RAW, "cpu", None)
    assert differ["variant"]["distributed"]["ranks_agree"] is False
    assert differ["numerics"]["status"] == "fail"
    assert differ["variant"]["distributed"]["ranks_differ"] == [1]
    typed = DistributedRun(**{**differ["variant"]["distributed"], "ranks": ()})
    said = numerics_said(Numerics(status=NumericsStatus.FAIL), typed)
    assert said is not None and "parameters of rank 1 differ from rank 0's" in said
    assert "parameters_sha256" not in differ["distributed"]["ranks"][0]  # not a document fact


def test_a_rank_ended_after_a_collectives_deadline_is_named_as_the_silent_one() -> None:
    timed_out = {
        "status": "error",
        "error": "eager warm-up: RuntimeError: [unbound_buffer.cc:129] Timed out waiting "
        "10000ms for send operation to complete",
    }
    raw = {**RAW, "collective_timeout_s": 10}
    merged = merge_reports([timed_out, None], [0, -9], raw, "cpu", 0, [1])
    assert merged["error"].startswith(
        "rank 1 of 2 did not answer in a collective for 10 s (collective_timeout_s); rank 0: "
    )
    plain = {"status": "error", "error": "forward: ValueError: bad shape"}
    merged = merge_reports([plain, None], [0, -9], raw, "cpu", 0, [1])
    assert merged["error"] == "rank 0 of 2: forward: ValueError: bad shape"


def test_fsdp2_is_read_and_keeps_ddps_bucket_size_out(tmp_path: Path) -> None:
    fsdp2 = "    iterations: 10\n    distributed: {wrapper: fsdp2, world_size: 2}\n"
    step = small_step(fsdp2, tmp_path)
    assert step.distributed is not None and step.distributed.wrapper == "fsdp2"
    bad = fsdp2.replace("world_size: 2}", "world_size: 2, bucket_cap_mb: 4}")
    message = error_of(GOOD.replace("    iterations: 10\n", bad), tmp_path)
    assert "steps[1].distributed.bucket_cap_mb" in message and "wrapper: ddp" in message
    ranks = (RankRecord(0, "ok", None, None, 1, 0), RankRecord(1, "ok", None, None, 1, 0))
    fsdp = DistributedRun(wrapper="fsdp2", world_size=2, backend="gloo", ranks=ranks)
    assert distributed_sentence(step_with(fsdp)) == (
        "FSDP2, 2 ranks over gloo: default every rank 1 graph break, 0 recompiles"
    )


def test_a_paired_childs_sides_each_take_the_slowest_ranks_samples() -> None:
    def paired(base: list[float], head: list[float]) -> dict[str, Any]:
        return {
            "status": "ok",
            "error": None,
            "sides": {
                "base": {"eager": {"timed": {"eager": timed(*base)}}},
                "head": {"eager": {"timed": {"eager": timed(*head)}}},
            },
        }

    merged = merge_reports(
        [paired([1.0, 3.0], [2.0, 2.0]), paired([2.0, 1.0], [1.0, 4.0])], [0, 0], RAW, "cpu", None
    )
    assert merged["sides"]["base"]["eager"]["timed"]["eager"]["samples"] == [2.0, 3.0]
    assert merged["sides"]["head"]["eager"]["timed"]["eager"]["samples"] == [2.0, 4.0]
