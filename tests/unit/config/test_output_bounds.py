"""Bounds on what a measuring child can make the parent hold or the host give it: output
lines cut in the relay, and the container limits as config and policy (config/limits.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compilegate.config.limits import ResourceLimits, shown_mib, under_baseline
from compilegate.config.loading import load_config_text
from compilegate.containers.limits import limit_kwargs, output_over, read_refused
from compilegate.errors import ConfigError
from compilegate.run.relay import CUT_MARKER, bounded_lines


def test_a_line_without_a_newline_is_cut_to_the_bound_with_a_marker() -> None:
    chunks = [b"a" * 1000] * 50 + [b"tail\nnext line\n"]
    lines = list(bounded_lines(chunks, max_line_bytes=100))
    assert lines[0] == "a" * 100 + CUT_MARKER.format(cut=50_004 - 100)
    assert lines[1:] == ["next line"]


def test_lines_split_across_chunks_are_joined_and_a_last_line_is_kept() -> None:
    lines = list(bounded_lines([b"he", b"llo\r\nwor", b"ld"], max_line_bytes=100))
    assert lines == ["hello", "world"]


def test_limits_take_defaults_for_what_a_document_leaves_out_or_gets_wrong() -> None:
    limits = ResourceLimits.from_dict({"pids": 64, "memory_mib": "lots", "log_mib": True})
    assert limits == ResourceLimits(pids=64)
    assert shown_mib(8192) == "8 GiB" and shown_mib(768) == "768 MiB"


def test_a_run_against_a_baseline_gets_no_more_than_the_baseline_allows() -> None:
    recorded = {"a": {"pids": 100}}  # step name → its baseline step's settings.limits
    asked = [("a", ResourceLimits(pids=10**6, memory_mib=1024)), ("new", ResourceLimits(pids=9999))]
    limits = under_baseline(asked, recorded)
    # "a" capped by its baseline step; "new" (not in the baseline) by the defaults
    assert limits.pids == ResourceLimits().pids
    assert limits.memory_mib == ResourceLimits().memory_mib
    assert under_baseline(asked, None).pids == 10**6  # no trusted side: the config's own


def test_limit_kwargs_bound_memory_without_swap_pids_and_the_log() -> None:
    kwargs = limit_kwargs(ResourceLimits(memory_mib=512, pids=64, log_mib=16))
    assert kwargs["mem_limit"] == kwargs["memswap_limit"] == "512m"
    assert kwargs["pids_limit"] == 64
    assert kwargs["log_config"]["Config"] == {"max-size": "16m", "max-file": "1"}


def test_an_output_folder_over_its_limit_is_refused_without_following_links(
    tmp_path: Path,
) -> None:
    (tmp_path / "big").write_bytes(b"x" * (2 << 20))
    (tmp_path / "link").symlink_to("/")
    assert output_over(tmp_path, ResourceLimits(output_mib=1)) is not None
    assert output_over(tmp_path, ResourceLimits(output_mib=3)) is None


def test_pids_events_counter_is_read_and_an_unreadable_one_is_zero(tmp_path: Path) -> None:
    events = tmp_path / "pids.events"
    events.write_text("max 7\n")
    assert read_refused(events) == 7
    assert read_refused(tmp_path / "missing") == 0


def test_config_limits_come_from_defaults_and_the_step_and_unknown_keys_are_errors(
    tmp_path: Path,
) -> None:
    text = (
        "version: 1\ndefaults:\n  limits: {pids: 128, memory_mib: 2048}\n"
        "steps:\n  - name: a\n    entry: s.py:f\n    limits: {pids: 64}\n"
    )
    config = load_config_text(text, source="compilegate.yml", repo_root=tmp_path)
    assert config.steps[0].limits == ResourceLimits(pids=64, memory_mib=2048)
    with pytest.raises(ConfigError, match=r"steps\[0\]\.limits\.cpus"):
        load_config_text(
            text.replace("{pids: 64}", "{cpus: 4}"), source="compilegate.yml", repo_root=tmp_path
        )
