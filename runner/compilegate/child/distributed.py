"""A distributed step's ranks (child process; config `distributed`).

The measuring child of a step with `distributed` measures nothing itself. It starts
`world_size` rank processes — this interpreter, the bootstrap the launcher uses, the same spec,
this child's environment, working directory and process group, so the parent's budget and
kill reach every rank — and waits for them (`run_ranks`). Each rank joins one process group
(a FileStore in this child's private folder for the rendezvous, the collectives over the
loopback interface only; `join_group`), wraps every copy of the step it builds in the wrapper
(`wrap`: compilegate wraps what the factory returns, so one factory serves a single-process
step and a distributed one), measures exactly what a single-process child measures, and writes
its own report. Every rank draws the same batches: the step under the wrapper computes what
the single-process step computes (gradients averaged over identical ones), so numerics and
the float64 reference mean what they mean without ranks.

The ranks' reports are merged (`merge_reports`): rank 0's, with every timed sample the slowest
rank's (each iteration waits on it at the gradient all-reduce), and a `distributed` record:
the wrapper, world size, backend, each rank's status, graph breaks, recompiles and where DDP's
optimizer split the compiled model's graphs (`ddp_splits`: at gradient-bucket boundaries, so
each bucket's all-reduce can start during the backward; expected, never the user's graph
breaks). A rank that fails ends the others (they would
wait in a collective until the deadline) and the report is an error naming that rank; a rank
blocked in a collective past `collective_timeout_s` fails there and is named the same way.

Standard library and torch only; Python 3.8-parseable.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

# How a rank process starts: as the launcher starts a child (run/launcher.py), the package
# loaded from its folder with the working directory off sys.path, then `rank_main`.
RANK_BOOTSTRAP = """\
import sys
sys.path[:] = [entry for entry in sys.path if entry not in ("", ".")]
import importlib.util
spec = importlib.util.spec_from_file_location(
    "compilegate", sys.argv[1] + "/__init__.py", submodule_search_locations=[sys.argv[1]])
module = importlib.util.module_from_spec(spec)
sys.modules["compilegate"] = module
spec.loader.exec_module(module)
from compilegate.child.main import rank_main
rank_main(sys.argv[2], int(sys.argv[3]), sys.argv[4])
"""
PACKAGE_DIR = Path(__file__).resolve().parents[1]
DEFAULT_COLLECTIVE_TIMEOUT_S = 300.0
# After a rank fails, how long the others get to finish on their own before they are ended.
STOP_GRACE_S = 5.0
POLL_S = 0.2
WRAPPERS = ("ddp", "fsdp2")
# How a collective's deadline reads in gloo's and NCCL's errors ("Timed out waiting 10000ms
# for recv operation to complete"; NCCL's watchdog: "collective operation timeout").
TIMED_OUT = re.compile(r"timed out|timeout", re.IGNORECASE)


@dataclass(frozen=True)
class RankPlace:
    """This process's place in the group: its rank and what the step's `distributed` says."""

    rank: int
    world_size: int
    wrapper: str
    backend: str
    bucket_cap_mb: float | None
    collective_timeout_s: float


_PLACE: RankPlace | None = None  # set once, by join_group, in a rank process


def place_of(settings: dict[str, Any], rank: int, device: str) -> RankPlace:
    """The rank's place from the step's `distributed` settings (config/model.py)."""
    raw = settings["distributed"]
    backend = raw.get("backend") or ("nccl" if device == "cuda" else "gloo")
    return RankPlace(
        rank=rank,
        world_size=int(raw["world_size"]),
        wrapper=str(raw["wrapper"]),
        backend=str(backend),
        bucket_cap_mb=raw.get("bucket_cap_mb"),
        collective_timeout_s=float(raw.get("collective_timeout_s") or DEFAULT_COLLECTIVE_TIMEOUT_S),
    )


def join_group(place: RankPlace, folder: str, device: str) -> None:
    """Join the step's process group (every collective bounded by the deadline)."""
    import datetime

    import torch
    import torch.distributed as dist

    global _PLACE
    if place.backend == "nccl" and device != "cuda":
        raise RuntimeError(f"distributed.backend nccl needs a GPU; this rank runs on {device}")
    if device == "cuda":
        torch.cuda.set_device(place.rank % max(1, torch.cuda.device_count()))
    store = dist.FileStore(os.path.join(folder, "store"), place.world_size)
    dist.init_process_group(
        place.backend,
        store=store,
        rank=place.rank,
        world_size=place.world_size,
        timeout=datetime.timedelta(seconds=place.collective_timeout_s),
    )
    _PLACE = place
    if place.wrapper == "ddp":
        DDP_SPLITS.install()


def current() -> RankPlace | None:
    return _PLACE


def wrap(parts: Any, device: str, blocks_of: Callable[[Any], tuple[str, Any]]) -> Any:
    """The model every copy of the step runs: under the wrapper in a rank, itself otherwise.

    DDP shares the model's parameters, so the factory's optimizer steps them. FSDP2
    (`fully_shard`) replaces them by sharded ones: each block of the model's repeated blocks
    (`blocks_of`, as regional compilation finds them) is sharded, then the whole model, and
    `parts.optimizer` becomes the factory's optimizer class over the sharded parameters, with
    its parameter groups and settings."""
    place = _PLACE
    model = parts.model
    if place is None:
        return model
    if place.wrapper == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        kwargs: dict[str, Any] = {}
        if place.bucket_cap_mb is not None:
            kwargs["bucket_cap_mb"] = place.bucket_cap_mb
        if device == "cuda":
            import torch

            kwargs["device_ids"] = [torch.cuda.current_device()]
        return DistributedDataParallel(model, **kwargs)
    if place.wrapper == "fsdp2":
        shard_fully(parts, blocks_of, device)
        return parts.model
    raise RuntimeError(f"distributed.wrapper {place.wrapper} is not measured by this compilegate")


def _fully_shard(version: str, device: str) -> Callable[..., Any]:
    """torch's FSDP2 entry, or RuntimeError saying why this torch cannot shard here."""
    try:
        from torch.distributed.fsdp import fully_shard

        return fully_shard
    except ImportError:  # torch 2.4 and 2.5 keep it under _composable
        pass
    try:
        from torch.distributed._composable.fsdp import fully_shard as composable
    except ImportError:
        raise RuntimeError(f"torch {version} has no FSDP2 (fully_shard)") from None
    if device != "cuda":
        raise RuntimeError(
            f"torch {version} keeps FSDP2 under torch.distributed._composable, whose forward "
            "asks for a CUDA stream: it does not run on a CPU (measured with torch 2.4.1; "
            "torch 2.13's torch.distributed.fsdp.fully_shard does)"
        )
    return composable


def shard_fully(parts: Any, blocks_of: Callable[[Any], tuple[str, Any]], device: str) -> None:
    """FSDP2 on the model's repeated blocks and its root, and the optimizer rebuilt over the
    sharded parameters (wrap's docstring)."""
    import torch

    fully_shard = _fully_shard(torch.__version__, device)
    if parts.scheduler is not None:
        raise RuntimeError(
            "distributed.wrapper fsdp2 with a learning-rate scheduler is not measured: the "
            "scheduler holds the optimizer compilegate rebuilds over the sharded parameters"
        )
    model, optimizer = parts.model, parts.optimizer
    names = {id(param): name for name, param in model.named_parameters()}
    try:
        _, blocks = blocks_of(model)
    except Exception:  # nothing repeats: the whole model is one unit
        blocks = []
    for block in blocks:
        fully_shard(block)
    fully_shard(model)
    sharded = dict(model.named_parameters())
    groups = []
    for group in optimizer.param_groups:
        settings = {key: value for key, value in group.items() if key != "params"}
        groups.append({**settings, "params": [sharded[names[id(p)]] for p in group["params"]]})
    accepted = inspect.signature(type(optimizer).__init__).parameters
    defaults = {key: value for key, value in optimizer.defaults.items() if key in accepted}
    parts.optimizer = type(optimizer)(groups, **defaults)


def ddp_splits() -> int | None:
    """Where DDP's optimizer (torch._dynamo.config.optimize_ddp) split the compiled model's
    graphs at gradient-bucket boundaries, by the end of the timed compile (`compiled`), else
    by now; None outside a DDP rank or where this torch's DDP optimizer cannot be counted."""
    place = _PLACE
    if place is None or place.wrapper != "ddp" or not DDP_SPLITS.installed:
        return None
    return DDP_SPLITS.at_compile if DDP_SPLITS.at_compile is not None else DDP_SPLITS.graphs


def compiled() -> None:
    """The timed copy's compile is over (child/measure.py): later compiles (the numerics'
    copies) are not the ones the count describes."""
    if DDP_SPLITS.at_compile is None:
        DDP_SPLITS.at_compile = DDP_SPLITS.graphs


class _SplitCounter:
    """Counts the splits DDPOptimizer makes: its compile_fn hands the buckets it settled on
    to `pretty_print_buckets` once per Dynamo graph (torch 2.4 to 2.13 alike) and compiles
    one graph per bucket, so a graph spanning n buckets is split n - 1 times."""

    def __init__(self) -> None:
        self.graphs = 0
        self.at_compile: int | None = None
        self.installed = False

    def install(self) -> None:
        try:
            from torch._dynamo.backends import distributed as ddp_backend
        except Exception:  # a torch without Dynamo's DDP optimizer: not counted
            return
        original = getattr(ddp_backend, "pretty_print_buckets", None)
        if original is None or self.installed:
            return

        def counted(buckets: Any, *args: Any, **kwargs: Any) -> Any:
            self.graphs += max(0, len(buckets) - 1)
            return original(buckets, *args, **kwargs)

        ddp_backend.pretty_print_buckets = counted
        self.installed = True


DDP_SPLITS = _SplitCounter()


def note_compiled_parameters(snapshot: dict[str, Any]) -> None:
    """The numerics' compiled copy's parameters after its last step (numerics.py), as a
    digest: DDP keeps every rank's parameters equal, so ranks whose digests differ did not
    train the same model."""
    global _PARAMETERS_DIGEST
    if _PLACE is None:
        return
    import torch

    digest = hashlib.sha256()
    try:
        for name in sorted(snapshot):
            kind, tensor = snapshot[name]
            if kind == "param":
                raw = tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8)
                digest.update(name.encode())
                digest.update(raw.numpy().tobytes())
    except Exception:  # a tensor this torch cannot view as bytes: not checked
        return
    _PARAMETERS_DIGEST = digest.hexdigest()


_PARAMETERS_DIGEST: str | None = None


def rank_facts(document: dict[str, Any]) -> dict[str, Any]:
    """What a rank's report says of it beside its measurement (its `distributed`): its rank,
    the graphs DDP split its compiled model into, its graph breaks and recompiles."""
    place = _PLACE
    diagnostics = document.get("diagnostics") or {}
    breaks, recompiles = diagnostics.get("graph_breaks"), diagnostics.get("recompiles")
    return {
        "rank": None if place is None else place.rank,
        "ddp_splits": ddp_splits(),
        "graph_breaks": breaks.get("count") if isinstance(breaks, dict) else None,
        "recompiles": recompiles.get("count") if isinstance(recompiles, dict) else None,
        "parameters_sha256": _PARAMETERS_DIGEST,
    }


# ---------------------------------------------------------------- the measuring child's side


def run_ranks(
    spec_path: str,
    settings: dict[str, Any],
    device: str,
    folder: Path,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    """Start the ranks, wait for them, merge their reports (the module's docstring)."""
    raw = settings["distributed"]
    world = int(raw["world_size"])
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["GLOO_SOCKET_IFNAME"] = "lo"  # the collectives stay on this machine
    env["NCCL_SOCKET_IFNAME"] = "lo"
    progress(f"starting {world} ranks ({raw['wrapper']})")
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
            "distributed": record,
        }
    merged = dict(reports[0] or {})
    for key in ("eager", "variant"):
        parts = [report.get(key) for report in reports if report is not None]
        timed = [part["timed"] for part in parts if isinstance(part, dict) and "timed" in part]
        if merged.get(key) and len(timed) == len(reports):
            merged[key] = {**merged[key], "timed": slowest(timed)}
    digests = [(report or {}).get("distributed", {}).get("parameters_sha256") for report in reports]
    if all(digests):
        record["ranks_agree"] = len(set(digests)) == 1
        numerics = merged.get("numerics")
        if not record["ranks_agree"] and isinstance(numerics, dict):
            differ = [r for r, digest in enumerate(digests) if digest != digests[0]]
            why = (
                f"the ranks disagree: after the compiled steps the parameters of rank "
                f"{', '.join(map(str, differ))} differ from rank 0's (DDP keeps them equal)"
            )
            reasons = "; ".join(filter(None, [numerics.get("reason"), why]))
            merged["numerics"] = {**numerics, "status": "fail", "reason": reasons}
    if isinstance(merged.get("variant"), dict):  # the variant's record carries the group's
        merged["variant"] = {**merged["variant"], "distributed": record}
    merged["distributed"] = record
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
    facts = {key: own.get(key) for key in ("ddp_splits", "graph_breaks", "recompiles")}
    return {"rank": rank, "status": "ok", "error": None, **facts}


def _most(values: Any) -> int | None:
    known = [v for v in values if isinstance(v, int)]
    return max(known) if known else None
