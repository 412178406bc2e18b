"""The launcher's rules for a child started ahead (run/child_process.py), without processes: which
Inductor cache it can take, and that a child asking to time (`quiet`) hears `go` only once
the child started ahead has parked (its imports done) or gone."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

from compilegate.run.child_process import INDUCTOR_CACHE, AheadPool, StartedChild, use_cache


def started(tmp_path: Path, cache: str | None = None) -> tuple[StartedChild, socket.socket]:
    """A child's record with its control line; the other end, as the child holds it."""
    ours, theirs = socket.socketpair()
    workdir = tmp_path / "child"
    workdir.mkdir(exist_ok=True)
    child = StartedChild(
        workdir=workdir,
        token="t",
        env_opt_in=(),
        cache=cache,
        env={},
        control=ours,
        their_end=theirs,
    )
    return child, theirs


def test_its_own_cache_becomes_a_link_to_the_cache_the_next_child_is_given(tmp_path: Path):
    child, _ = started(tmp_path)
    variant_cache = tmp_path / "variant-cache"
    variant_cache.mkdir()
    assert use_cache(child, variant_cache)
    own = child.workdir / INDUCTOR_CACHE
    assert own.is_symlink() and own.resolve() == variant_cache.resolve()


def test_a_child_that_needs_a_fresh_cache_takes_one_whose_own_is_empty(tmp_path: Path):
    child, _ = started(tmp_path)
    assert use_cache(child, None)
    (child.workdir / INDUCTOR_CACHE).mkdir()
    assert use_cache(child, tmp_path)  # an empty folder of its own gives way to the link


def test_an_own_cache_it_wrote_into_is_not_replaced(tmp_path: Path):
    child, _ = started(tmp_path)
    own = child.workdir / INDUCTOR_CACHE
    own.mkdir()
    (own / "entry").write_text("x")
    assert not use_cache(child, tmp_path / "elsewhere")
    assert (own / "entry").is_file()


def test_a_shared_cache_it_was_started_with_must_be_the_one_asked_for(tmp_path: Path):
    child, _ = started(tmp_path, cache=str(tmp_path / "shared"))
    assert use_cache(child, tmp_path / "shared")
    assert not use_cache(child, tmp_path / "other")
    assert not use_cache(child, None)  # it would not compile into a fresh cache


def read_line(end: socket.socket, timeout_s: float) -> bytes:
    end.settimeout(timeout_s)
    try:
        return end.recv(16)
    except TimeoutError:
        return b""


def answering(
    tmp_path: Path, ahead_pool: AheadPool, timing_pool: AheadPool
) -> tuple[socket.socket, socket.socket]:
    """A child started ahead in `ahead_pool` and a child about to time in `timing_pool`, each
    line answered by the launcher's reader; the two ends the children hold."""
    (tmp_path / "ahead").mkdir()
    ahead, ahead_end = started(tmp_path / "ahead")
    with ahead_pool._lock:
        ahead_pool._child = ahead
    timing, timing_end = started(tmp_path)
    threading.Thread(target=ahead.answer, args=(ahead_pool,), daemon=True).start()
    threading.Thread(target=timing.answer, args=(timing_pool,), daemon=True).start()
    return ahead_end, timing_end


def test_go_waits_until_the_child_started_ahead_has_parked(tmp_path: Path):
    waiting = AheadPool()
    ahead_end, timing_end = answering(tmp_path, waiting, waiting)
    timing_end.sendall(b"quiet\n")
    assert read_line(timing_end, 0.5) == b""  # the one ahead is still importing
    ahead_end.sendall(b"parked\n")
    assert read_line(timing_end, 10) == b"go\n"
    timing_end.sendall(b"quiet\n")
    assert read_line(timing_end, 10) == b"go\n"  # parked stays parked


def test_a_child_started_ahead_that_goes_counts_as_idle(tmp_path: Path):
    waiting = AheadPool()
    ahead_end, timing_end = answering(tmp_path, waiting, waiting)
    ahead_end.close()  # it ended (crashed while importing)
    timing_end.sendall(b"quiet\n")
    assert read_line(timing_end, 10) == b"go\n"


def test_without_a_child_ahead_go_comes_at_once_and_a_flood_is_not_read(tmp_path: Path):
    waiting = AheadPool()
    timing, timing_end = started(tmp_path)
    reader = threading.Thread(target=timing.answer, args=(waiting,), daemon=True)
    reader.start()
    timing_end.sendall(b"quiet\n")
    assert read_line(timing_end, 10) == b"go\n"
    timing_end.sendall(b"x" * 10_000)  # no line is that long: the reader stops
    reader.join(timeout=10)
    assert not reader.is_alive() and timing.parked.is_set()


def test_go_waits_for_the_other_sides_child_started_ahead_too(tmp_path: Path):
    """A paired run has a launcher per side: the base side's child started ahead, still
    importing, holds the head side's timed rounds as much as the head's own would."""
    head_side, base_side = AheadPool(), AheadPool()
    base_end, timing_end = answering(tmp_path, base_side, head_side)
    timing_end.sendall(b"quiet\n")
    assert read_line(timing_end, 0.5) == b""
    base_end.sendall(b"parked\n")
    assert read_line(timing_end, 10) == b"go\n"
