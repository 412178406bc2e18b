"""What one iteration of the step does, counted: the step-work pass (issue 39).

One steady iteration of the full training step, as the loop runs it (TrainingStep: zero_grad,
forward and loss, backward, optimizer step; no loss check, which would add a `.item()`), at a
batch index every process of the step has already run (the first timed one), after
everything timed and outside the compile probe, under `torch.profiler` (CPU activity; CUDA
activity too on a GPU, with record_shapes, with_flops, profile_memory). The profiler costs a
lot on the profiled iteration (~95 % on CUDA, PR #99571), so it never runs in a timed round.
The copy it runs on is not used for anything after it (its weights move one step).

The counts, each over that one iteration (`COUNT_KEYS`):

    aten_ops               ATen operator calls dispatched outside compiled code: every
                           profiler event named `aten::…`, nested calls included (the
                           dispatcher's work), except those inside a compiled region (a
                           `Torch-Compiled Region` or `CompiledFunctionBackward` event).
                           A TorchDispatchMode cannot take this: with one active, Dynamo runs
                           the compiled frames eagerly (checked on torch 2.13: the same ops as
                           eager, no compiled region entered).
    compiled_region_calls  compiled code entered: Dynamo frames (`Torch-Compiled Region: f/n`,
                           named by frame, `Torch-Compiled Region: f`) and compiled backward
                           graphs (`CompiledFunctionBackward`); 0 for eager. Absent for a
                           compiled step whose torch marks neither regions nor Dynamo's
                           cache lookups.
    kernels                CUDA: device kernels, memcpys and memsets. Absent on the CPU: eager
                           ops run in their ATen kernels (aten_ops), and Inductor's generated
                           C++ kernels leave no profiler event unless compiled with
                           `cpp.enable_kernel_profile` (another compile, other code).
    cuda_graph_replays     CUDA: `cudaGraphLaunch` calls (reduce-overhead). Absent on the CPU.
    host_syncs             waits of the host for the device: every `aten::_local_scalar_dense`
                           (each `.item()`; on CUDA only those that copy from the device, not
                           an `.item()` of a CPU tensor such as AdamW's step counter; on the
                           CPU every one but the reads of the optimizer's host-side counters,
                           `host_side_state`, which are no sync on any device) and,
                           on CUDA, `cudaStreamSynchronize`, `cudaDeviceSynchronize`,
                           `cudaEventSynchronize` and blocking `cudaMemcpy` calls not made by
                           a `.item()`.
    flops                  the profiler's FLOPs of the matmul, convolution and element-wise
                           ATen calls it has formulas for, wherever they run (Inductor's
                           extern matmuls inside compiled code included). Inductor's generated
                           kernels have none, so a compiled step's FLOPs are those of the work
                           it leaves to ATen. FlopCounterMode is a TorchDispatchMode: under it
                           Dynamo runs compiled frames eagerly, so it cannot count a compiled
                           step (checked on torch 2.13).
    allocations            tensor allocations on the step's device (the profiler's memory
    allocated_bytes        events: each allocator call on the CPU, each caching-allocator
                           block handed out on CUDA) and their bytes.

`top`: per count, the names that make it up, largest first, ties by name: every name up to
TOP_NAMES (a CPU step has fewer: the demo transformer's eager step has 78 ATen op names), so
two documents compare name by name. ATen op names; region names; kernel names; sync names;
FLOPs per op; allocations and bytes per innermost op (or record_function range) that made
them. Names hold no addresses or hashes (a compiled graph's `## Call CompiledFxGraph <hash>
##` is written without its hash).

`timing`: what bounds the step needs beside the counts (times of the profiled iteration, which
the profiler slows: never gated, only read against each other and against the unprofiled
step time by results/step_bound.py):

    profiled_ms            the iteration's span under the profiler (on CUDA to the end of
                           its kernels)
    compute_ms             CPU: the time of the outermost matrix multiplications and
                           convolutions (ATen calls with FLOPs and `mm` or `conv` in their
                           name: not the element-wise ops the profiler also has FLOP
                           formulas for); CUDA: the device kernels' total time
    compute_top            [[name, ms, calls], …]: where compute_ms went, largest first (5)
    device_busy_ms         CUDA: the union of the kernels' intervals (the GPU was busy);
                           null on the CPU
    dispatch_us            what one trivial ATen call costs this process (the fastest of 5
                           blocks of 200 `torch.add(out=)` on one-element tensors, CUDA
                           synchronised after each block: dispatch plus launch), taken after
                           the profile, untimed

`sync_sites` (eager only): [[file:line, calls], …], where one more iteration called a
tensor's `.item()` or `.tolist()`, so a new host sync names its line (`sync_sites`).

`absent`: count → why it is not there, a code (a count that cannot be taken is never 0;
report/absence_words.py words the codes). Every count is absent, with the reason, when the
pass fails (a torch whose profiler events lack this API, a step the profiler breaks: its
exception in `pass_error`) or when the counted iteration compiled
(torch._dynamo's counters moved): that iteration's work is the compile's, not the step's.

Exact: two runs of the example transformer (dropout on) under two busy loops gave identical
records, eager, `compile: model` and `compile: step`, name by name; so did two processes
each of a small MLP under max-autotune and under `dynamic: true` with a batch that grows
(torch 2.13, CPU); eager counts are the same on torch 2.4.1 and 2.13 for a small MLP.
Not a function of the code alone, and not checked: max-autotune on a GPU chooses between
extern matmuls (ATen ops, FLOPs) and Triton templates (kernels only) by timing them, so
its counts may differ between runs; data-dependent control flow follows the counted batch
and the weights it meets (the same in every run of one commit, on a deterministic device).
The CUDA path (kernels, graph replays, the synchronisations) is written from the
profiler's event names and has not run on a GPU yet.

Child-process only: standard library and torch (checked on 2.4.1 and 2.13).
"""

from __future__ import annotations

import collections
import time
from typing import Any

from .protocol import STEP_WORK_COUNTS
from .training import TrainingStep

COUNT_KEYS = STEP_WORK_COUNTS
TOP_NAMES = 100
REGION_PREFIX = "Torch-Compiled Region"
COMPILED_BACKWARD = "CompiledFunctionBackward"
CACHE_LOOKUP = "TorchDynamo Cache Lookup"
ITEM = "aten::_local_scalar_dense"
CUDA_SYNCS = (
    "cudaStreamSynchronize",
    "cudaDeviceSynchronize",
    "cudaEventSynchronize",
    "cudaMemcpy",
)
GRAPH_LAUNCH = "cudaGraphLaunch"
MEMORY_EVENT = "[memory]"
HARNESS_SYNC = "compilegate: wait for the step's kernels"
OUTSIDE_OPS = "(outside any op)"
COMPILED_GRAPH_PREFIX = "## Call CompiledFxGraph"
COMPILED_GRAPH = "## Call CompiledFxGraph ##"
MAX_NAME_CHARS = 160
# Why a count is absent: codes (results/model.py Absence; report/absence_words.py words them).
CPU_KERNELS_ABSENT = "cpu_no_kernels"
CPU_GRAPHS_ABSENT = "cpu_no_cuda_graphs"
NO_REGION_ABSENT = "no_compiled_region"
NO_REGION_OPS_ABSENT = "no_compiled_region_ops"
RECOMPILED = "recompiled"
PASS_FAILED = "count_pass_failed"


def count_step_work(step: TrainingStep, index: int, paths: Any = None) -> dict[str, Any]:
    """The step-work record of one iteration of `step` at batch `index`. When the pass
    fails (a torch without the profiler's events API, a step the profiler breaks), every
    count is absent with the reason. `paths` (a dynamo_logs.PathClassifier), for an eager
    step only: where its code calls `.item()` (`sync_sites`), from one more iteration."""
    try:
        record = _count(step, index)
    except Exception as exc:  # the counts are then unknown, never a failed measurement
        error = " ".join(f"{type(exc).__name__}: {exc}".split())
        return {**all_absent(PASS_FAILED, index), "pass_error": error[:300]}
    if paths is not None and not step.compiled and record["counts"]["host_syncs"] is not None:
        sites = sync_sites(step, index, paths)
        if sites is not None:
            record["sync_sites"] = sites
    return record


SYNC_CALLS = ("item", "tolist")


def sync_sites(step: TrainingStep, index: int, paths: Any) -> list[list[Any]] | None:
    """[[file:line, calls], …], largest first: where one more eager iteration at batch
    `index` called a tensor's `.item()` or `.tolist()` (each reads the tensor on the host:
    a host sync on a GPU; not the optimizer's host-side counters), found with
    `sys.setprofile` (the call's own line, as the classifier shows the file:
    repository-relative, a package's module path, `torch/…`).
    Eager only: under a profile function Dynamo converts frames again (checked on torch
    2.13), so a compiled step is never run under it. None when the pass fails."""
    import sys

    import torch

    sites: collections.Counter[str] = collections.Counter()
    counters = {id(tensor) for tensor in host_side_state(step.parts.optimizer)}

    def hook(frame: Any, event: str, arg: Any) -> None:
        if (
            event == "c_call"
            and getattr(arg, "__name__", None) in SYNC_CALLS
            and isinstance(getattr(arg, "__self__", None), torch.Tensor)
            and id(arg.__self__) not in counters  # no sync on any device (host_side_state)
        ):
            shown, _ = paths.locate(frame.f_code.co_filename)
            sites[f"{shown}:{frame.f_lineno}"] += 1

    previous = sys.getprofile()
    try:
        sys.setprofile(hook)
        try:
            step(index)
        finally:
            sys.setprofile(previous)
    except Exception:
        return None
    return top_names(sites)


def all_absent(reason: str, index: int) -> dict[str, Any]:
    return {
        "counts": {key: None for key in COUNT_KEYS},
        "absent": {key: reason for key in COUNT_KEYS},
        "top": {},
        "batch_index": index,
    }


def _count(step: TrainingStep, index: int) -> dict[str, Any]:
    import torch
    from torch.profiler import ProfilerActivity, profile

    cuda = step.device == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    counters = host_side_state(step.parts.optimizer)
    before = dynamo_compiles()
    if cuda:
        torch.cuda.synchronize()
    with profile(
        activities=activities, record_shapes=True, with_flops=True, profile_memory=True
    ) as profiled:
        step(index)
        if cuda:  # the kernels finish inside the profile; this wait is not the step's
            with torch.profiler.record_function(HARNESS_SYNC):
                torch.cuda.synchronize()
    if dynamo_compiles() != before:
        return all_absent(RECOMPILED, index)
    results = profiled.profiler.kineto_results
    events = [_Event.of(raw) for raw in results.events()]
    # The counters as they are after the step too: one made by this step (a parameter's
    # first gradient) is read in it.
    counters += host_side_state(step.parts.optimizer)
    reads = find_counter_reads(results, {storage_pointer(t) for t in counters})
    record = tally(events, device=step.device, compiled=step.compiled, counter_reads=reads)
    record["timing"]["dispatch_us"] = dispatch_cost_us(step.device)
    return {**record, "batch_index": index}


def host_side_state(optimizer: Any) -> list[Any]:
    """The optimizer's state tensors that torch keeps on the host whatever device the step
    runs on: each 0-dim CPU tensor in `optimizer.state` (AdamW's and Adam's `step`
    counters, read with `.item()` by torch/optim/optimizer.py's `_get_value`) of a param
    group neither `capturable` nor `fused` (those keep the counter beside its parameter,
    where reading it would wait for a GPU). On a GPU an `.item()` of one reads host memory;
    on the CPU the profiler cannot tell it from a read of the loss, so the count leaves
    exactly these out, by identity: an `.item()` of anything else (parameters, buffers,
    activations, the loss, a tensor the user made) is still a host sync. [] when the
    optimizer has no such state (SGD) or is not torch's kind."""
    import torch

    found: list[Any] = []
    try:
        for group in optimizer.param_groups:
            if group.get("capturable") or group.get("fused"):
                continue
            for param in group["params"]:
                for value in optimizer.state.get(param, {}).values():
                    if (
                        isinstance(value, torch.Tensor)
                        and value.dim() == 0
                        and value.device.type == "cpu"
                    ):
                        found.append(value)
    except Exception:  # not a torch.optim.Optimizer's layout: nothing is left out
        return []
    return found


def storage_pointer(tensor: Any) -> int:
    """Where `tensor`'s storage lives, as the profiler's tensor metadata records it."""
    try:
        return int(tensor.untyped_storage().data_ptr())
    except AttributeError:  # torch before 2.0
        return int(tensor.storage().data_ptr())


def find_counter_reads(results: Any, pointers: set[int]) -> frozenset[int]:
    """The start times (ns) of the `aten::_local_scalar_dense` calls that read a tensor
    stored at one of `pointers` (the optimizer's host-side counters), from the profiler's
    event tree (its op inputs, recorded with `record_shapes`; the same start times as
    the kineto events, checked on torch 2.4.1 and 2.13). Empty when there is no pointer or
    this torch's tree has no inputs: then every read is counted, as before."""
    if not pointers:
        return frozenset()
    try:
        stack = list(results.experimental_event_tree())
    except Exception:
        return frozenset()
    found = set()
    while stack:
        node = stack.pop()
        stack.extend(getattr(node, "children", ()))
        if getattr(node, "name", None) != ITEM:
            continue
        inputs = getattr(getattr(node, "extra_fields", None), "inputs", None) or ()
        if any(getattr(tensor, "storage_data_ptr", None) in pointers for tensor in inputs):
            found.add(int(node.start_time_ns))
    return frozenset(found)


DISPATCH_BLOCKS = 5
DISPATCH_CALLS = 200


def dispatch_cost_us(device: str) -> float | None:
    """Microseconds one trivial ATen call costs here: the fastest of DISPATCH_BLOCKS blocks
    of DISPATCH_CALLS `torch.add(out=)` on one-element tensors on `device` (on CUDA the
    block ends with a synchronize, so a launch is in it). The fastest block, because load
    only ever adds to it. None when it cannot be taken."""
    try:
        import torch

        x = torch.zeros(1, device=device)
        y = torch.ones(1, device=device)
        out = torch.empty(1, device=device)
        cuda = device == "cuda"
        for _ in range(DISPATCH_CALLS // 4):
            torch.add(x, y, out=out)
        best = float("inf")
        for _ in range(DISPATCH_BLOCKS):
            if cuda:
                torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(DISPATCH_CALLS):
                torch.add(x, y, out=out)
            if cuda:
                torch.cuda.synchronize()
            best = min(best, (time.perf_counter() - start) / DISPATCH_CALLS)
        return round(best * 1e6, 3)
    except Exception:
        return None


def dynamo_compiles() -> tuple[tuple[str, int], ...]:
    """torch._dynamo's compile counters (frames, graphs); () when torch has none. A count
    pass that moves them compiled."""
    try:
        from torch._dynamo.utils import counters
    except Exception:
        return ()
    return tuple(
        sorted(
            (f"{group}.{name}", int(value))
            for group in ("frames", "stats")
            for name, value in counters[group].items()
            if isinstance(value, int)
        )
    )


class _Event:
    """One profiler event, as the tally reads it."""

    __slots__ = ("device", "end_ns", "flops", "name", "nbytes", "on_device", "start_ns", "thread")

    def __init__(
        self,
        name: str,
        start_ns: int,
        end_ns: int,
        thread: int,
        device: str,
        flops: int = 0,
        nbytes: int = 0,
    ) -> None:
        self.name, self.start_ns, self.end_ns, self.thread = name, start_ns, end_ns, thread
        self.device, self.flops, self.nbytes = device, flops, nbytes
        self.on_device = device != "cpu" and name != MEMORY_EVENT

    @classmethod
    def of(cls, raw: Any) -> _Event:
        device = str(raw.device_type()).rpartition(".")[2].lower()
        start = int(raw.start_ns())
        name = raw.name()
        return cls(
            name=name,
            start_ns=start,
            end_ns=start + max(int(raw.duration_ns()), 0),
            thread=int(raw.start_thread_id()),
            device=device,
            flops=int(raw.flops() or 0) if name != MEMORY_EVENT else 0,
            nbytes=int(raw.nbytes() or 0) if name == MEMORY_EVENT else 0,
        )


def tally(
    events: list[_Event],
    *,
    device: str,
    compiled: bool,
    counter_reads: frozenset[int] = frozenset(),
) -> dict[str, Any]:
    """The counts, absences and top names of one iteration's events (see the module's
    docstring). `counter_reads`: the start times of the `.item()` calls that read the
    optimizer's host-side counters (`host_side_state`). Pure: unit tests feed it events."""
    enclosing = _enclosing(events)
    # On CUDA an `.item()` waits for the device only when it copies from it (a CUDA copy or
    # synchronise inside it); one of a CPU tensor (AdamW's `step` counter) reads host memory.
    waited = {
        parent
        for i, event in enumerate(events)
        if event.name in CUDA_SYNCS or event.name.startswith("cudaMemcpy")
        for parent in enclosing[i]
    }
    names: dict[str, collections.Counter[str]] = {key: collections.Counter() for key in COUNT_KEYS}
    saw_dynamo = False
    for i, event in enumerate(events):
        name = event.name
        if event.on_device:  # kernels, memcpy, memset (CUDA activity)
            names["kernels"][_short(name)] += 1
            continue
        parents = enclosing[i]
        parent_names = [events[p].name for p in parents]
        if name == HARNESS_SYNC or HARNESS_SYNC in parent_names:
            continue
        if name == MEMORY_EVENT:
            if event.nbytes > 0 and event.device == device:
                owner = _plain(parent_names[0]) if parent_names else OUTSIDE_OPS
                names["allocations"][owner] += 1
                names["allocated_bytes"][owner] += event.nbytes
            continue
        if name.startswith(REGION_PREFIX) or name == COMPILED_BACKWARD:
            names["compiled_region_calls"][_region(name)] += 1
            saw_dynamo = True
            continue
        if name == CACHE_LOOKUP:
            saw_dynamo = True
            continue
        if name == GRAPH_LAUNCH:
            names["cuda_graph_replays"][name] += 1
        if is_host_sync(event, i, device=device, waited=waited, counter_reads=counter_reads) or (
            name in CUDA_SYNCS and ITEM not in parent_names
        ):
            names["host_syncs"][name] += 1
        if event.flops > 0:
            names["flops"][name] += event.flops
        inside_compiled = any(
            n.startswith(REGION_PREFIX) or n == COMPILED_BACKWARD for n in parent_names
        )
        if name.startswith("aten::") and not inside_compiled:
            names["aten_ops"][name] += 1
    absent: dict[str, str] = {}
    if device != "cuda":
        absent["kernels"] = CPU_KERNELS_ABSENT
        absent["cuda_graph_replays"] = CPU_GRAPHS_ABSENT
    if compiled and not saw_dynamo:
        absent["compiled_region_calls"] = NO_REGION_ABSENT
        absent["aten_ops"] = NO_REGION_OPS_ABSENT
    counts: dict[str, int | None] = {
        key: None if key in absent else sum(names[key].values()) for key in COUNT_KEYS
    }
    top = {key: top_names(names[key]) for key in COUNT_KEYS if key not in absent and names[key]}
    return {
        "counts": counts,
        "absent": absent,
        "top": top,
        "timing": timing(events, enclosing, cuda=device == "cuda"),
    }


def is_host_sync(
    event: _Event, index: int, *, device: str, waited: set[int], counter_reads: frozenset[int]
) -> bool:
    """Whether `event` is an `.item()` (`aten::_local_scalar_dense`) that waits, or on a GPU
    would wait, for the device: on CUDA one that copies from it (`waited`: a CUDA copy or
    synchronise inside it); on the CPU every one but a read of the optimizer's host-side
    counters (`counter_reads`), which stay on the host on a GPU too (docs/numbers.md,
    "Host syncs on a CPU and on CUDA")."""
    if event.name != ITEM:
        return False
    if device == "cuda":
        return index in waited
    return event.start_ns not in counter_reads


COMPUTE_TOP = 5


def timing(events: list[_Event], enclosing: list[list[int]], *, cuda: bool) -> dict[str, Any]:
    """The profiled iteration's times that say what bounds the step (module docstring):
    its host span, where the compute went, and on CUDA how long the GPU was busy."""
    host = [e for e in events if not e.on_device and e.name != MEMORY_EVENT]
    span_ns = max(e.end_ns for e in host) - min(e.start_ns for e in host) if host else 0
    spent: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
    if cuda:
        compute = [e for e in events if e.on_device]
    else:
        compute = [
            e
            for i, e in enumerate(events)
            if _is_matmul(e) and not any(_is_matmul(events[p]) for p in enclosing[i])
        ]
    for event in compute:
        entry = spent[_short(event.name)]
        entry[0] += (event.end_ns - event.start_ns) / 1e6
        entry[1] += 1
    ranked = sorted(spent.items(), key=lambda item: (-item[1][0], item[0]))
    return {
        "profiled_ms": round(span_ns / 1e6, 3),
        "compute_ms": round(sum(ms for ms, _ in spent.values()), 3),
        "compute_top": [
            [name, round(ms, 3), int(calls)] for name, (ms, calls) in ranked[:COMPUTE_TOP]
        ],
        "device_busy_ms": round(_union_ns(compute) / 1e6, 3) if cuda else None,
        "dispatch_us": None,
    }


def _is_matmul(event: _Event) -> bool:
    """A host ATen call that multiplies matrices or convolves (the profiler gives it FLOPs;
    element-wise ops with FLOP formulas, `aten::mul` and `aten::add`, are not these)."""
    name = event.name
    return (
        not event.on_device
        and event.flops > 0
        and name.startswith("aten::")
        and ("mm" in name or "conv" in name)
    )


def _union_ns(events: list[_Event]) -> int:
    """Nanoseconds covered by at least one of `events` (kernels on several streams overlap)."""
    total, reach = 0, None
    for event in sorted(events, key=lambda e: e.start_ns):
        if reach is None or event.start_ns > reach:
            total += event.end_ns - event.start_ns
            reach = event.end_ns
        elif event.end_ns > reach:
            total += event.end_ns - reach
            reach = event.end_ns
    return total


def top_names(counter: collections.Counter[str]) -> list[list[Any]]:
    """[[name, value], …]: the largest first, ties by name, at most TOP_NAMES."""
    ranked = sorted(counter.items(), key=lambda item: (-item[1], item[0]))
    return [[name, value] for name, value in ranked[:TOP_NAMES]]


def _short(name: str) -> str:
    return name if len(name) <= MAX_NAME_CHARS else name[: MAX_NAME_CHARS - 1] + "…"


def _region(name: str) -> str:
    """A Dynamo frame's region without its recompile number (`Torch-Compiled Region: 2/1` →
    `Torch-Compiled Region: 2`): which cache entry ran depends on what the process compiled
    before (an epoch end, a shape), the frame on the code."""
    head, slash, _ = name.rpartition("/")
    return head if slash and name.startswith(REGION_PREFIX) else name


def _plain(name: str) -> str:
    """A name without what differs between runs of one commit: a compiled graph's hash."""
    return COMPILED_GRAPH if name.startswith(COMPILED_GRAPH_PREFIX) else _short(name)


def _enclosing(events: list[_Event]) -> list[list[int]]:
    """For each event, the indices of the host events that enclose it on its thread,
    innermost first: a sweep over each thread's events by start time (an event at the very
    start of another is inside it; one at its very end too)."""
    out: list[list[int]] = [[] for _ in events]
    by_thread: dict[int, list[int]] = collections.defaultdict(list)
    for i, event in enumerate(events):
        if not event.on_device:
            by_thread[event.thread].append(i)
    for indices in by_thread.values():
        # Longer first at one start (the parent before its child), memory events last.
        indices.sort(
            key=lambda i: (
                events[i].start_ns,
                events[i].name == MEMORY_EVENT,
                -events[i].end_ns,
            )
        )
        stack: list[int] = []
        for i in indices:
            event = events[i]
            while stack and events[stack[-1]].end_ns < event.start_ns:
                stack.pop()
            out[i] = list(reversed(stack))
            if event.name != MEMORY_EVENT and event.end_ns > event.start_ns:
                stack.append(i)
    return out
