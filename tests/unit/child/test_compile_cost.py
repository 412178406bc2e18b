"""Compile cost: the process-tree CPU reading, torch's work counts, and their pooling in the
result (child/compile_cost.py, results/compile_cost.py)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from compilegate.child.compile_cost import (
    live_descendants_cpu_s,
    parse_stat,
    work_counts,
)
from compilegate.results.compile_cost import (
    CompileRecord,
    cache_label,
    compile_cost,
    counts_of,
    half_width_pct,
    process_compile,
)
from compilegate.results.model import ColdSample, FastestMs, Process
from compilegate.results.process_report import ProcessReport


def stat_line(pid: int, comm: str, ppid: int, utime: int, stime: int, cu: int = 0, cs: int = 0):
    # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime ...
    return f"{pid} ({comm}) S {ppid} 1 1 0 -1 0 0 0 0 0 {utime} {stime} {cu} {cs} 20 0 1 0\n"


def fake_proc(tmp_path: Path, rows: list[tuple[int, str, int, int, int, int, int]]) -> Path:
    for pid, comm, ppid, ut, st, cu, cs in rows:
        folder = tmp_path / str(pid)
        folder.mkdir()
        (folder / "stat").write_text(stat_line(pid, comm, ppid, ut, st, cu, cs))
    (tmp_path / "self").mkdir()
    (tmp_path / "meminfo").write_text("not a process\n")
    return tmp_path


def test_a_command_name_with_spaces_and_parentheses_is_parsed_from_the_last_paren() -> None:
    ticks = 100
    assert parse_stat(stat_line(7, "a) (b c", 3, 150, 50, 10, 0), ticks) == (3, 2.1)
    assert parse_stat("garbage", ticks) is None
    assert parse_stat(None, ticks) is None


def test_live_descendants_are_summed_through_the_tree_and_strangers_are_not(
    tmp_path: Path,
) -> None:
    ticks = os.sysconf("SC_CLK_TCK")
    proc = fake_proc(
        tmp_path,
        [
            (100, "python", 1, 999, 999, 0, 0),  # the root itself: RUSAGE_SELF counts it
            (200, "compile_worker", 100, ticks, 0, 0, 0),  # sidecar: 1 s
            (300, "pool worker", 200, 2 * ticks, ticks, 0, 0),  # its worker: 3 s
            (301, "pool worker", 200, 0, 0, ticks, ticks),  # reaped g++ children: 2 s
            (400, "stranger", 1, 50 * ticks, 0, 0, 0),
        ],
    )
    assert live_descendants_cpu_s(100, str(proc)) == pytest.approx(6.0)
    assert live_descendants_cpu_s(400, str(proc)) == 0.0
    assert live_descendants_cpu_s(100, str(tmp_path / "missing")) == 0.0


def snapshot(records: list[dict], *, available: bool = True, graphs: int | None = 2) -> dict:
    counters = {"stats": {"unique_graphs": graphs}} if graphs is not None else {}
    return {
        "counters": counters,
        "counters_available": True,
        "metrics": records,
        "metrics_available": available,
    }


def test_work_counts_split_forward_and_backward_records_and_sum_nodes_and_guards() -> None:
    records = [
        {"kind": "forward", "graph_node_count": 33, "guard_count": 199},
        {"kind": "backward", "graph_node_count": None, "guard_count": None},
        {"kind": "forward", "graph_node_count": 7, "guard_count": 10},  # a recompile
    ]
    assert work_counts(snapshot(records), 61) == {
        "graphs": 2,
        "fx_nodes": 40,
        "guards": 209,
        "generated_kernels": 61,
        "compile_records": 2,
        "backward_compile_records": 1,
    }


def test_a_torch_without_compilation_metrics_leaves_those_counts_null() -> None:
    counts = work_counts(snapshot([], available=False), 4)
    assert counts["graphs"] == 2 and counts["generated_kernels"] == 4
    assert counts["fx_nodes"] is None and counts["compile_records"] is None
    assert work_counts({}, None)["graphs"] is None
    # records without the fields (2.2's private records): null, not 0
    assert work_counts(snapshot([{"kind": "forward"}]), 1)["guards"] is None
    # nothing compiled: counters cleared, no unique_graphs key → 0 graphs
    assert work_counts(snapshot([], graphs=None), 0)["graphs"] == 0


def test_a_fresh_directory_is_cold_and_a_reused_one_is_warm_only_if_torch_hit_a_cache() -> None:
    assert cache_label("fresh", 3) == "cold"
    assert cache_label("reused", 2) == "warm"
    assert cache_label("reused", 0) == "cold"  # torch 2.4: FX-graph cache off by default
    assert cache_label("shared", None) == "warm"


def child_compile(
    wall: float, cpu: float, eager_wall: float = 1.0, eager_cpu: float = 1.5
) -> ProcessReport:
    return ProcessReport.from_json(
        {
            "compile": {
                "window": {"wall_s": wall + eager_wall, "cpu_s": cpu + eager_cpu},
                "eager_window": {"wall_s": eager_wall, "cpu_s": eager_cpu},
                "cache_hits": 0,
            }
        },
        "variant",
    )


def test_the_compile_is_the_window_minus_eagers_warm_up_in_wall_and_cpu() -> None:
    record = process_compile(child_compile(20.0, 30.0).compile, "fresh")
    assert record.wall_s == pytest.approx(20.0) and record.cpu_s == pytest.approx(30.0)
    assert record.cache == "cold"
    legacy = process_compile(CompileRecord(), "fresh", [5.0, 0.1], [0.1, 0.1])
    assert legacy.wall_s == pytest.approx(4.9) and legacy.cpu_s is None


def process(wall_s: float, cpu_s: float, cache: str) -> Process:
    return Process(
        fastest_ms=FastestMs(eager=1.0), compile_wall_s=wall_s, compile_cpu_s=cpu_s, cache=cache
    )


def test_cold_samples_give_the_cpu_noise_and_warm_processes_the_warm_wall_time() -> None:
    counts = counts_of({"graphs": 1})
    records = [
        process(50.0, 20.0, "cold"),
        process(5.0, 4.0, "warm"),
        process(7.0, 5.0, "warm"),
        process(9.0, 6.0, "warm"),
    ]
    cost = compile_cost(records, counts, "rusage+proc")
    assert cost.wall_s == 50.0 and cost.cpu_s == 20.0
    assert cost.cold_samples == (ColdSample(wall_s=50.0, cpu_s=20.0),)
    assert cost.cpu_noise_pct is None  # one cold sample: no estimate
    assert cost.warm_wall_s == 7.0
    assert cost.counts.graphs == 1 and cost.counts.guards is None
    assert cost.cpu_method == "rusage+proc"
    cold = [replace(r, cache="cold") for r in records]
    assert compile_cost(cold, counts).warm_wall_s is None
    assert len(compile_cost(cold, counts).cold_samples) == 4
    # A cold process without a compile wall time is no sample (the schema's cold sample
    # has both times).
    unmeasured = [process(50.0, 20.0, "cold"), replace(records[0], compile_wall_s=None)]
    assert len(compile_cost(unmeasured, counts).cold_samples) == 1


def test_half_width_is_the_t_interval_of_the_mean_in_percent() -> None:
    # mean 20, sd 2, n 4: t(0.975, 3) = 3.182 → 3.182 * 2 / 2 / 20 = 15.9 %
    values = [18.0, 22.0, 18.0, 22.0]
    sd = (4 * 4 / 3) ** 0.5
    assert half_width_pct(values) == pytest.approx(3.1824 * sd / 2 / 20 * 100, rel=1e-3)
    assert half_width_pct([20.0]) is None
