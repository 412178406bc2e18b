"""A distributed step's ranks, from the measuring child (config `distributed`).

The measuring child of a distributed step measures nothing itself. It starts `world_size`
rank processes (`run_ranks`) — this interpreter, the bootstrap the launcher uses, the same
spec, this child's environment, working directory and process group, so the parent's budget
and kill reach every rank — and waits for them. Each rank measures as a one-process child
does, under the wrapper (child/distributed.py), and writes its own report. Every rank draws
the same batches: the step under the wrapper computes what the one-process step computes
(gradients averaged over identical ones), so numerics and the float64 reference mean what
they mean without ranks.

The ranks' reports are merged (`merge_reports`): rank 0's, with every timed sample the slowest
rank's (each iteration waits on it at the gradient all-reduce), and the group's `distributed`
record: wrapper, world size, backend, each rank's status, graph breaks, recompiles and DDP
splits, and whether the ranks' parameters agreed (they must: else the numerics fail). A rank
that fails ends the others (they would wait in a collective until the deadline) and the report
is an error naming the rank that failed first; a rank the child had to end after another's
collective passed its deadline is named as the one that did not answer.

Standard library and torch only; Python 3.8-parseable.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from .distributed import place_of
from .protocol import Phase, bootstrap

# How a rank process starts: as the launcher starts a child (run/launcher.py), the package
# loaded from its folder with the working directory off sys.path, then `rank_main`.
RANK_BOOTSTRAP = bootstrap(
    "from compilegate.child.main import rank_main\n"
    "rank_main(sys.argv[2], int(sys.argv[3]), sys.argv[4])"
)
PACKAGE_DIR = Path(__file__).resolve().parents[1]
# What the document keeps of each rank's own facts (child/distributed.rank_facts).
RANK_FACTS = ("ddp_splits", "graph_breaks", "recompiles", "compile_s", "peak_bytes", "aten_ops")
# After a rank fails, how long the others get to finish on their own before they are ended.
STOP_GRACE_S = 5.0
POLL_S = 0.2
# How a collective's deadline reads in gloo's and NCCL's errors ("Timed out waiting 10000ms
# for recv operation to complete"; NCCL's watchdog: "collective operation timeout").
TIMED_OUT = re.compile(r"timed out|timeout", re.IGNORECASE)


def run_ranks(
    spec_path: str,
    settings: dict[str, Any],
    device: str,
    folder: Path,
    progress: Callable[[Phase, str], None],
) -> dict[str, Any]:
    """Start the ranks, wait for them, merge their reports (the module's docstring)."""
    raw = settings["distributed"]
    world = int(raw["world_size"])
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["GLOO_SOCKET_IFNAME"] = "lo"  # the collectives stay on this machine
    env["NCCL_SOCKET_IFNAME"] = "lo"
    progress(Phase.OTHER, f"starting {world} ranks ({raw['wrapper']})")
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                RANK_BOOTSTRAP,
                str(PACKAGE_DIR),
                spec_path,
                str(r),
                str(folder),
            ],
            env=env,
            stdin=subprocess.DEVNULL,
        )
        for r in range(world)
    ]
    failed, killed = _wait(processes, folder)
    reports = [_read(folder, r) for r in range(world)]
    codes = [p.returncode for p in processes]
    return merge_reports(reports, codes, raw, device, failed, killed)


def _wait(processes: list[subprocess.Popen[bytes]], folder: Path) -> tuple[int | None, list[int]]:
    """Wait for every rank; when one fails (an error report, or an exit without one), give
    the others STOP_GRACE_S and end them. Returns the rank that failed first — by when its
    error report was written, else when its exit was seen: a rank whose peer raised fails
    too, in the collective it was waiting in, after the peer — or None; and the ranks it
    ended."""
    ended: dict[int, float] = {}
    killed: list[int] = []
    stop_at: float | None = None
    while True:
        for r, p in enumerate(processes):
            if r not in ended and p.poll() is not None:
                ended[r] = time.time()
        failures = {
            r: _failed_at(folder, r, processes[r].returncode, at) for r, at in ended.items()
        }
        failures = {r: at for r, at in failures.items() if at is not None}
        if failures and stop_at is None:
            stop_at = time.monotonic() + STOP_GRACE_S
        if len(ended) == len(processes):
            first = min(failures, key=lambda r: failures[r] or 0.0) if failures else None
            return first, killed
        if stop_at is not None and time.monotonic() >= stop_at:
            for r, p in enumerate(processes):
                if r not in ended and r not in killed:
                    _end(p)
                    killed.append(r)
        time.sleep(POLL_S)


def _failed_at(folder: Path, rank: int, code: int | None, ended: float) -> float | None:
    """When the rank failed (its error report's time, else its exit's), None if it did not."""
    report = _read(folder, rank)
    if report is not None and report.get("status") == "ok" and code == 0:
        return None
    try:
        written = (folder / f"rank{rank}.json").stat().st_mtime
    except OSError:
        return ended
    return min(written, ended)


def _end(process: subprocess.Popen[bytes]) -> None:
    try:
        process.send_signal(signal.SIGKILL)
    except OSError:
        pass


def _read(folder: Path, rank: int) -> dict[str, Any] | None:
    try:
        value = json.loads((folder / f"rank{rank}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def merge_reports(
    reports: list[dict[str, Any] | None],
    codes: list[int | None],
    raw: dict[str, Any],
    device: str,
    failed: int | None,
    killed: list[int] | tuple[int, ...] = (),
) -> dict[str, Any]:
    """One report from the ranks' (the module's docstring); `failed`: the first rank seen
    failing, whose error the report carries; `killed`: the ranks ended after it. When that
    error is a collective's deadline and a rank had to be ended, that rank is named as the
    one that did not answer."""
    place = place_of({"distributed": raw}, 0, device)
    ranks = [_rank_record(r, report, codes[r], failed) for r, report in enumerate(reports)]
    record = {
        "wrapper": place.wrapper,
        "world_size": place.world_size,
        "backend": place.backend,
        "bucket_cap_mb": place.bucket_cap_mb,
        "ranks": ranks,
        "ddp_splits": _most(rank.get("ddp_splits") for rank in ranks),
    }
    bad = [rank for rank in ranks if rank["status"] != "ok"]
    if bad:
        first = next((rank for rank in bad if rank["rank"] == failed), bad[0])
        error = f"rank {first['rank']} of {place.world_size}: {first['error']}"
        silent = [r for r in killed if r != first["rank"]]
        if silent and TIMED_OUT.search(str(first["error"])):
            error = (
                f"rank {', '.join(map(str, silent))} of {place.world_size} did not answer in a "
                f"collective for {place.collective_timeout_s:g} s (collective_timeout_s); "
                f"rank {first['rank']}: {first['error']}"
            )
        return {
            "status": "error",
            "error": error,
            "phase": (reports[first["rank"]] or {}).get("phase"),
            "doing": (reports[first["rank"]] or {}).get("doing"),
            "distributed": record,
        }
    merged = with_slowest([report or {} for report in reports])
    digests = [(report or {}).get("distributed", {}).get("parameters_sha256") for report in reports]
    if all(digests):
        record["ranks_agree"] = len(set(digests)) == 1
        numerics = merged.get("numerics")
        if not record["ranks_agree"]:  # the ranks whose parameters differ from rank 0's
            record["ranks_differ"] = [r for r, digest in enumerate(digests) if digest != digests[0]]
        if not record["ranks_agree"] and isinstance(numerics, dict):
            merged["numerics"] = {**numerics, "status": "fail"}  # report/ says why
    if isinstance(merged.get("variant"), dict):  # the variant's record carries the group's
        merged["variant"] = {**merged["variant"], "distributed": record}
    merged["distributed"] = record
    return merged


def with_slowest(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Rank 0's report with the slowest rank's samples in each `eager` and `variant` record,
    and in each side's of a paired child (`sides`: base and head in one process)."""
    merged = dict(reports[0])
    for key in ("eager", "variant"):
        parts = [report.get(key) for report in reports]
        timed = [part["timed"] for part in parts if isinstance(part, dict) and "timed" in part]
        if merged.get(key) and len(timed) == len(reports):
            merged[key] = {**merged[key], "timed": slowest(timed)}
    sides = merged.get("sides")
    if isinstance(sides, dict):
        merged["sides"] = {
            role: with_slowest(
                [((report.get("sides") or {}).get(role) or {}) for report in reports]
            )
            for role in sides
        }
    return merged


def slowest(timed: list[dict[str, dict[str, list[Any]]]]) -> dict[str, dict[str, list[Any]]]:
    """Each side's samples, the slowest rank's at each position (rounds as rank 0's)."""
    out: dict[str, dict[str, list[Any]]] = {}
    for side, first in timed[0].items():
        columns = [t[side]["samples"] for t in timed if side in t]
        out[side] = {
            "samples": [max(values) for values in zip(*columns)],
            "rounds": list(first["rounds"])[: min(len(c) for c in columns)],
        }
    return out


def _rank_record(
    rank: int, report: dict[str, Any] | None, code: int | None, failed: int | None
) -> dict[str, Any]:
    if report is None:
        if failed is not None and failed != rank:
            error = f"ended after rank {failed} failed"
        else:
            error = f"ended without a report (exit code {code})"
        return {"rank": rank, "status": "error", "error": error}
    if report.get("status") != "ok":
        error = " ".join(str(report.get("error")).split())[:400]
        return {"rank": rank, "status": "error", "error": error}
    own = report.get("distributed") or {}
    facts = {key: own.get(key) for key in RANK_FACTS}
    return {"rank": rank, "status": "ok", "error": None, **facts}


def _most(values: Any) -> int | None:
    known = [v for v in values if isinstance(v, int)]
    return max(known) if known else None
