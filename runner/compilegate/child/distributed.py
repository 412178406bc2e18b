"""A distributed step's rank (child process; config `distributed`): its place in the group,
the wrapper around every copy of the step, and what it says of itself.

A rank (started by child/ranks.py) joins one process group (`join_group`: a FileStore in the
measuring child's private folder for the rendezvous, the collectives on the loopback interface
only, each bounded by `collective_timeout_s`), wraps every copy of the step it builds
(`wrap`: compilegate wraps what the factory returns, so one factory serves a one-process step
and a distributed one), measures exactly what a one-process child measures, and adds its own
facts to its report (`rank_facts`): its rank, its graph breaks and recompiles, where DDP's
optimizer split its compiled graphs (`ddp_splits`: at gradient-bucket boundaries, so each
bucket's all-reduce can start during the backward; expected, never the user's graph breaks),
and a digest of the numerics' compiled parameters, which DDP keeps equal on every rank.

Standard library and torch only; Python 3.8-parseable.
"""

from __future__ import annotations

import hashlib
import inspect
import os
from dataclasses import dataclass
from typing import Any, Callable

DEFAULT_COLLECTIVE_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class RankPlace:
    """This process's place in the group: its rank and what the step's `distributed` says."""

    rank: int
    world_size: int
    wrapper: str
    backend: str
    bucket_cap_mb: float | None
    collective_timeout_s: float


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


class RankGroup:
    """This rank's membership of its step's process group, made by `join_group` and passed
    to what needs it (child/main.py Child, the StepBuilder every copy is built by): its
    place, where DDP split its compiled graphs, and the digest of the numerics' compiled
    parameters. A process that is no rank has none (None wherever one is taken)."""

    def __init__(self, place: RankPlace) -> None:
        self.place = place
        self.splits = _SplitCounter()
        self.parameters_digest: str | None = None

    def compiled(self) -> None:
        """The timed copy's compile is over (child/measure.py): later compiles (the
        numerics' copies) are not the ones the split count describes."""
        if self.splits.at_compile is None:
            self.splits.at_compile = self.splits.graphs

    def ddp_splits(self) -> int | None:
        """Where DDP's optimizer (torch._dynamo.config.optimize_ddp) split the compiled
        model's graphs at gradient-bucket boundaries, by the end of the timed compile
        (`compiled`), else by now; None outside DDP or where this torch's DDP optimizer
        cannot be counted."""
        splits = self.splits
        if self.place.wrapper != "ddp" or not splits.installed:
            return None
        return splits.at_compile if splits.at_compile is not None else splits.graphs

    def note_compiled_parameters(self, snapshot: dict[str, Any]) -> None:
        """The numerics' compiled copy's parameters after its last step (numerics.py), as a
        digest: DDP keeps every rank's parameters equal, so ranks whose digests differ did
        not train the same model."""
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
        self.parameters_digest = digest.hexdigest()


def join_group(place: RankPlace, folder: str, device: str) -> RankGroup:
    """Join the step's process group (every collective bounded by the deadline); this rank's
    membership, to pass on."""
    import datetime

    import torch
    import torch.distributed as dist

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
    group = RankGroup(place)
    if place.wrapper == "ddp":
        group.splits.install()
    return group


def wrap(
    parts: Any,
    device: str,
    blocks_of: Callable[[Any], tuple[str, Any]],
    group: RankGroup | None,
) -> Any:
    """The model every copy of the step runs: under the wrapper in a rank (`group`), itself
    otherwise.

    DDP shares the model's parameters, so the factory's optimizer steps them. FSDP2
    (`fully_shard`) replaces them by sharded ones: each block of the model's repeated blocks
    (`blocks_of`, as regional compilation finds them) is sharded, then the whole model, and
    `parts.optimizer` becomes the factory's optimizer class over the sharded parameters, with
    its parameter groups and settings."""
    model = parts.model
    if group is None:
        return model
    place = group.place
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


def rank_facts(document: dict[str, Any], group: RankGroup) -> dict[str, Any]:
    """What a rank's report says of it beside its measurement (its `distributed`): its rank,
    where DDP split its compiled graphs, its graph breaks and recompiles, its compile seconds
    (the compile window less eager's warm-up, as results/compile_cost.py reads the first
    rank's), its peak memory and the ATen ops of one compiled step (step work)."""
    diagnostics = document.get("diagnostics") or {}
    breaks, recompiles = diagnostics.get("graph_breaks"), diagnostics.get("recompiles")
    variant = document.get("variant") or {}
    return {
        "rank": group.place.rank,
        "ddp_splits": group.ddp_splits(),
        "graph_breaks": breaks.get("count") if isinstance(breaks, dict) else None,
        "recompiles": recompiles.get("count") if isinstance(recompiles, dict) else None,
        "compile_s": _compile_s(variant.get("compile") or {}),
        "peak_bytes": variant.get("peak_bytes"),
        "aten_ops": ((variant.get("step_work") or {}).get("counts") or {}).get("aten_ops"),
        "parameters_sha256": group.parameters_digest,
    }


def _compile_s(record: dict[str, Any]) -> float | None:
    window = (record.get("window") or {}).get("wall_s")
    eager = (record.get("eager_window") or {}).get("wall_s")
    if not isinstance(window, (int, float)) or not isinstance(eager, (int, float)):
        return None
    return round(max(0.0, float(window) - float(eager)), 3)
