"""One graph break, one site: where the graph split, and the innermost cause (pure functions).

torch sees a break inside inlined calls several times. Dynamo stops the frame it was
compiling at the outermost call, runs that call eagerly, compiles each callee as a frame of
its own and breaks again in each, down to the cause; torch 2.13 also adds a
"step_unsupported" entry where it compiled a frame up to its last resumable point. A Hugging
Face GPT-2 step's one `logger.warning_once` in `loss_function` (inlined from `forward`) gives
four `graph_break_reasons` entries in four frames and four log records at the cause.

Rule, per break:
* entries whose stacks end at the same cause and lie on one call path are one break;
* its site is where a graph was cut: the outermost frame on that path whose compile produced
  graph ops (CompilationMetrics.graph_op_count, 2.3+), as torch._dynamo.explain counts graphs
  (frames that only pass the call on compile an empty graph and are not splits); compilegate's
  own loop is never the site. Without op counts (2.1-2.2, or a metrics deque that overflowed)
  the site is the cause itself;
* its cause is the innermost frame, with the reason (the log's text, else the entry's).

Origin, from the site's first frame that is not compilegate's: "repo", "library" (installed
packages, gated like the user's own: an upgrade that adds one is news) or "torch" (torch's
internal breaks, e.g. the optimizer's own `graph_break()`: listed, not counted).
No torch import: unit-tested on snapshots captured from real runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .dynamo_logs import PathClassifier, parse_graph_break_record, summarize_reason

GATED_ORIGINS = ("repo", "library")
_ORIGIN_RANK = {"repo": 0, "library": 1, "torch": 2}
# 2.13 torch/_dynamo/symbolic_convert.py step_graph_break: "compiled up to the last resumable
# point" — it marks a split, its cause is the break below it on the same call path.
_SPLIT_ONLY_REASONS = ("step_unsupported",)
_COMPILE_ID_RE = re.compile(r"^(\d+)/(\d+)$")
_RESUME_RE = re.compile(r"^(?:torch_dynamo_resume_in_(\w+?)_at_\d+|<resume in (\w+)>)$")


@dataclass(frozen=True)
class Frame:
    file: str  # as torch reported it (absolute)
    line: int
    function: str | None


@dataclass
class _Entry:
    """One graph_break_reasons entry: one frame compile that ended in a break."""

    reason: str
    stack: list[Frame]  # the compiled frame's position first, the cause last
    ops: int | None = None  # graph ops that frame compiled before the break; None: unknown
    split_only: bool = False


# How torch (2.4; not 2.13) records each split DDP's optimizer makes at a gradient-bucket
# boundary among the graph breaks: the split is counted as one (child/distributed.py), and a
# user's graph break and a bucket split must never be confused.
DDP_SPLIT_REASON = "DDPOptimizer intentional graph-break"


@dataclass
class _Break:
    cause: Frame
    chain: list[Frame]  # the longest path seen, outermost first, ending at the cause
    entries: list[_Entry] = field(default_factory=list)
    log_reasons: list[str] = field(default_factory=list)


def graph_break_sites(
    records: list[dict[str, Any]],
    break_reasons: list[dict[str, Any]],
    metrics: list[dict[str, Any]],
    paths: PathClassifier,
    *,
    metrics_complete: bool = True,
) -> dict[str, Any]:
    """The variant's `graph_breaks`: one site per break, `count` over repo and library."""
    entries = _entries(break_reasons)
    if metrics_complete:
        _attach_op_counts(entries, metrics)
    _resolve_split_only(entries)
    breaks: list[_Break] = []
    for entry in entries:
        _add_entry(breaks, entry, paths)
    for record in records:
        if not record["logger"].endswith("__graph_breaks"):
            continue
        parsed = parse_graph_break_record(record["text"], record.get("exc", ""))
        if parsed is None or parsed["reason"].startswith(DDP_SPLIT_REASON):
            continue
        cause = Frame(parsed["file"], parsed["line"], parsed["function"])
        found = [b for b in breaks if _same_place(b.cause, cause, paths)]
        if not found:
            found = [_Break(cause, [cause])]
            breaks.extend(found)
        for brk in found:
            brk.log_reasons.append(parsed["reason"])
    sites: dict[tuple[Any, ...], dict[str, Any]] = {}
    for brk in breaks:
        site = _site(brk, paths)
        key = (site["file"], site["line"], site["cause"]["file"], site["cause"]["line"])
        if key in sites:  # two call paths that both end up shown at the cause
            sites[key]["count"] += site["count"]
            sources = sites[key]["sources"] + site["sources"]
            sites[key]["sources"] = [s for s in ("log", "graph_break_reasons") if s in sources]
        else:
            sites[key] = site
    out = sorted(
        sites.values(), key=lambda s: (_ORIGIN_RANK[s["origin"]], s["file"], s["line"] or 0)
    )
    return {"count": sum(1 for s in out if s["origin"] in GATED_ORIGINS), "sites": out}


def _entries(break_reasons: list[dict[str, Any]]) -> list[_Entry]:
    out = []
    for raw in break_reasons:
        stack_raw = raw.get("stack")
        if stack_raw is None:  # a snapshot that kept only the innermost frame
            stack_raw = [{k: raw.get(k) for k in ("file", "line", "function")}]
        stack = [
            Frame(str(f["file"]), int(f["line"]), _name(f.get("function")))
            for f in stack_raw
            if f.get("file") is not None and f.get("line") is not None
        ]
        reason = str(raw.get("reason", ""))
        if reason.startswith(DDP_SPLIT_REASON):  # a DDP split, counted as such, not a break
            continue
        if stack:
            out.append(_Entry(reason, stack, split_only=reason in _SPLIT_ONLY_REASONS))
    return out


def _attach_op_counts(entries: list[_Entry], metrics: list[dict[str, Any]]) -> None:
    """Line each entry up with its frame compile's metrics, in order: same code object."""
    compiles = [
        m for m in metrics if m.get("co_name") and _COMPILE_ID_RE.match(str(m.get("compile_id")))
    ]
    start = 0
    for entry in entries:
        top = entry.stack[0]
        for index in range(start, len(compiles)):
            if _same_code(compiles[index], top):
                ops = compiles[index].get("graph_op_count")
                entry.ops = ops if isinstance(ops, int) else None
                start = index + 1
                break


def _same_code(metric: dict[str, Any], frame: Frame) -> bool:
    """A compile of the frame's code: 2.13 names a resume function's frame after the original
    function, 2.4 after the resume function itself."""
    name = str(metric["co_name"])
    if metric.get("co_filename") != frame.file:
        return False
    if name != frame.function and not name.startswith(f"torch_dynamo_resume_in_{frame.function}_"):
        return False
    first = metric.get("co_firstlineno")
    return not isinstance(first, int) or first <= frame.line


def _resolve_split_only(entries: list[_Entry]) -> None:
    """A split-only entry's cause is the break whose path passes its position: the nearest
    earlier entry that does (the frames above it broke first), else a later one."""
    for index, entry in enumerate(entries):
        if not entry.split_only:
            continue
        here = (entry.stack[-1].file, entry.stack[-1].line)
        candidates = [*reversed(entries[:index]), *entries[index + 1 :]]
        for other in candidates:
            if other.split_only:
                continue
            places = [(f.file, f.line) for f in other.stack[:-1]]
            if here in places:
                entry.stack = entry.stack[:-1] + other.stack[places.index(here) :]
                break


def _add_entry(breaks: list[_Break], entry: _Entry, paths: PathClassifier) -> None:
    cause = entry.stack[-1]
    for brk in breaks:
        if _same_place(brk.cause, cause, paths) and _one_path(brk.chain, entry.stack, paths):
            brk.entries.append(entry)
            if len(entry.stack) > len(brk.chain):
                brk.chain = entry.stack
            return
    breaks.append(_Break(cause, entry.stack, [entry]))


def _same_place(a: Frame, b: Frame, paths: PathClassifier) -> bool:
    return a.line == b.line and paths.locate(a.file)[0] == paths.locate(b.file)[0]


def _one_path(a: list[Frame], b: list[Frame], paths: PathClassifier) -> bool:
    """One stack ends with the other: the same call path, seen from different frames."""
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return all(_same_place(x, y, paths) for x, y in zip(short, long[len(long) - len(short) :]))


def _site(brk: _Break, paths: PathClassifier) -> dict[str, Any]:
    cut = [e for e in brk.entries if not _is_harness(e.stack, paths) and (e.ops or 0) > 0]
    if cut:  # the outermost frame that compiled a non-empty graph before the break
        path = _without_harness(max(cut, key=lambda e: len(e.stack)).stack, paths)
    else:
        path = [brk.cause]
    split = path[0]
    # How many compiles broke here (one entry each; a recompiled frame breaks again). Log
    # records are per frame on the path, so they count only a break no entry saw.
    at_split = sum(1 for e in brk.entries if _same_place(e.stack[0], split, paths))
    count = at_split if brk.entries else len(brk.log_reasons)
    origin = next((o for o in (paths.locate(f.file)[1] for f in path) if o != "harness"), "torch")
    reason = paths.relativize(_reason(brk))
    cause_file = paths.locate(brk.cause.file)[0]
    sources = (["log"] if brk.log_reasons else []) + (
        ["graph_break_reasons"] if brk.entries else []
    )
    return {
        "file": paths.locate(split.file)[0],
        "line": split.line,
        "function": _user_function(split.function),
        "reason": reason,
        "count": max(count, 1),
        "origin": origin,
        "in_repo": origin == "repo",
        "cause": {
            "file": cause_file,
            "line": brk.cause.line,
            "function": _user_function(brk.cause.function or _function_at(brk, brk.cause)),
            "reason": reason,
        },
        "sources": sources,
    }


def _reason(brk: _Break) -> str:
    if brk.log_reasons:
        return brk.log_reasons[0]
    for entry in brk.entries:
        if not entry.split_only:
            return summarize_reason(entry.reason)
    return "unknown reason"


def _function_at(brk: _Break, frame: Frame) -> str | None:
    return next((f.function for f in brk.chain if f == frame and f.function), None)


def _name(function: Any) -> str | None:
    """A frame's function name: torch 2.4 gives the class itself for a frame Dynamo made
    under DDP's optimizer (its graph_break_reasons' user_stack), where a string is expected."""
    if function is None or isinstance(function, str):
        return function
    return str(getattr(function, "__name__", function))


def _user_function(name: str | None) -> str | None:
    """`forward` for Dynamo's resume functions (2.2+ `torch_dynamo_resume_in_forward_at_22`,
    2.1 `<resume in forward>`): the user wrote forward."""
    if name is None:
        return None
    match = _RESUME_RE.match(name)
    return (match.group(1) or match.group(2)) if match else name


def _is_harness(stack: list[Frame], paths: PathClassifier) -> bool:
    return all(paths.locate(f.file)[1] == "harness" for f in stack)


def _without_harness(stack: list[Frame], paths: PathClassifier) -> list[Frame]:
    """From the first frame that is not compilegate's training loop (it is never the site)."""
    for index, frame in enumerate(stack):
        if paths.locate(frame.file)[1] != "harness":
            return stack[index:]
    return stack
