"""Every mistake a user makes gets one line, the documented exit code, and no traceback;
a step that fails at run time is recorded in the result while the other steps still run."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import REPO_ROOT, assert_one_line_error, run_cli, run_cli_measured, write_config

from compilegate.report.child_failure_words import said_error

BAD = "examples/test_steps/bad_steps.py"
GOOD_VARIANT = (
    "    variants: [{backend: eager}]\n    warmup: 1\n    iterations: 4\n    rounds: 2\n"
    "    variant_processes: 1\n"
)


@pytest.mark.parametrize(
    ("body", "fragments"),
    [
        ("  - name: a\n    entry: [unclosed\n", ["bad.yml:5:", "malformed YAML"]),
        (
            "  - name: a\n    entry: x.py:f\n    warmpu: 3\n",
            ["bad.yml:5: steps[0].warmpu:", "'warmpu' was unexpected"],
        ),
        (
            "  - name: a\n    entry: examples/nope.py:make_step\n",
            ["steps[0].entry", "file 'examples/nope.py' does not exist"],
        ),
        (
            f"  - name: a\n    entry: {BAD}:make_nothing\n",
            ["steps[0].entry", "defines no function 'make_nothing'"],
        ),
        ("  - name: a\n    entry: ../../etc/x.py:f\n", ["outside the repository"]),
        (
            "  - name: a\n    entry: x.py:f\n    ? [a, b]\n    : 1\n",
            ["bad.yml:5:", "a key must be a plain value, found a list"],
        ),
    ],
)
def test_config_mistakes_exit_2(tmp_path: Path, body: str, fragments: list[str]) -> None:
    config = write_config(tmp_path / "bad.yml", body)
    run = run_cli(
        "run", "--config", str(config), "--repo", str(REPO_ROOT), "--out", str(tmp_path / "r.json")
    )
    assert_one_line_error(run, 2, *fragments)
    assert run.result is None, "nothing is measured for an invalid config"


def test_a_yaml_alias_bomb_exits_2_in_bounded_memory(tmp_path: Path) -> None:
    """Issue 29: 508 bytes of nested aliases expanded to 9**8 strings that schema validation
    walked and printed: 3.9 GB peak and 26 s, on the host, before any container. Refused at
    the first anchor now, in the memory of an idle CLI."""
    lists = [f"&a0 [{','.join(['x' * 16] * 9)}]"]
    lists += [f"&a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 8)]
    config = write_config(
        tmp_path / "bomb.yml", f"  - entry: x.py:f\n    name: [{', '.join(lists)}]\n"
    )
    assert config.stat().st_size < 520
    run, peak_bytes = run_cli_measured(
        "run", "--config", str(config), "--repo", str(REPO_ROOT), "--out", str(tmp_path / "r.json"),
        tmp_path=tmp_path, memory_cap_bytes=1 << 30,
    )  # fmt: skip
    assert_one_line_error(run, 2, "bomb.yml:4: an anchor &a0:", "anchors and aliases")
    # Against an idle CLI measured the same way: Linux carries ru_maxrss across execve, so
    # both include the forked pytest's own peak (224 MiB in a full suite with torch loaded).
    idle = write_config(tmp_path / "idle.yml", "  - entry: x.py:f\n    name: plain\n")
    _, idle_bytes = run_cli_measured(
        "run", "--config", str(idle), "--repo", str(tmp_path), "--out", str(tmp_path / "i.json"),
        tmp_path=tmp_path, memory_cap_bytes=1 << 30,
    )  # fmt: skip
    grew = (peak_bytes - idle_bytes) / 2**20
    assert grew < 50, f"peak RSS {peak_bytes / 2**20:.0f} MiB, {grew:.0f} MiB over an idle CLI"
    assert not (tmp_path / "r.json").exists()


def test_usage_mistakes_exit_2(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.yml", f"  - name: a\n    entry: {BAD}:make_raising\n")
    run = run_cli(
        "run", "--config", str(config), "--repo", str(REPO_ROOT), "--python", "/nonexistent/python"
    )
    assert_one_line_error(run, 2, "--python /nonexistent/python: no such interpreter")
    run = run_cli("run", "--config", str(config), "--repo", str(REPO_ROOT), "--step", "zzz")
    assert_one_line_error(run, 2, "--step 'zzz' is not declared")
    run = run_cli("run", "--config", str(tmp_path / "missing.yml"))
    assert_one_line_error(run, 2, "missing.yml: config file not found")

    # Found before anything is measured: no child is started (no progress lines), no result.
    run = run_cli("run", "--config", str(config), "--repo", str(REPO_ROOT), "--out", str(tmp_path))
    assert_one_line_error(run, 2, f"--out {tmp_path}: is a directory")
    for baseline, fragment in [
        (tmp_path / "missing.json", "baseline file not found"),
        (config, "baseline is not valid JSON"),
        (tmp_path, "found a directory"),
    ]:
        out = tmp_path / "r.json"
        run = run_cli(
            "run",
            "--config",
            str(config),
            "--repo",
            str(REPO_ROOT),
            "--out",
            str(out),
            "--baseline",
            str(baseline),
        )
        assert_one_line_error(run, 2, f"{baseline}: ", fragment)
        assert not out.exists(), "nothing is measured before the baseline is known good"
    # Paired mode's mistakes, found before anything is measured.
    out = tmp_path / "paired.json"
    common = ("--config", str(config), "--repo", str(REPO_ROOT), "--out", str(out))
    for args, fragment in [
        (("--against", "no-such-ref-anywhere"), "--against no-such-ref-anywhere: not a commit"),
        (("--against=--output=/tmp/x",), "--against '--output=/tmp/x': expected a commit"),
        (("--against", "HEAD", "--baseline", str(config)), "--against and --baseline"),
    ]:
        run = run_cli("run", *common, *args)
        assert_one_line_error(run, 2, fragment)
        assert not out.exists()
    for args, fragment in [
        (("--paired", "--torch", "2.13.0"), "--paired: give at least two --torch versions"),
        (("--paired", "--against", "HEAD", "--torch", "1.0", "--torch", "2.0"), "give one"),
    ]:
        run = run_cli("matrix", "--config", str(config), "--repo", str(REPO_ROOT), *args)
        assert_one_line_error(run, 2, fragment)
    python_without_torch = tmp_path / "python"
    python_without_torch.write_text('#!/bin/sh\nexec /usr/bin/env python3 -S "$@"\n')
    python_without_torch.chmod(0o755)


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("failing")
    steps = {
        "raises": "make_raising",
        "no-loss": "make_missing_loss",
        "vector-loss": "make_vector_loss",
        "nan-loss": "make_nan_loss",
        "aborts": "make_aborting",
        "sleeps": "make_sleeping",
        "not-callable": "NOT_A_FUNCTION",
    }
    body = "".join(
        f"  - name: {name}\n    entry: {BAD}:{fn}\n{GOOD_VARIANT}" for name, fn in steps.items()
    )
    body = body.replace("  - name: sleeps\n", "  - name: sleeps\n    timeout_s: 5\n")
    body += f"  - name: cuda\n    entry: {BAD}:make_cuda_only\n    device: cuda\n{GOOD_VARIANT}"
    body += (
        "  - name: good\n    entry: examples/test_steps/tiny_mlp.py:make_step_object\n"
        + GOOD_VARIANT
    )
    config = write_config(tmp / "c.yml", body)
    out = tmp / "result.json"
    return run_cli("run", "--config", str(config), "--repo", str(REPO_ROOT), "--out", str(out))


def step(run, name: str) -> dict:
    return next(s for s in run.result["steps"] if s["name"] == name)


def test_failing_steps_exit_3_and_good_step_is_still_measured(failing_run) -> None:
    assert failing_run.returncode == 3, failing_run.stderr
    assert "Traceback" not in failing_run.stdout + failing_run.stderr
    good = step(failing_run, "good")
    assert good["status"] == "ok"
    assert good["variants"][0]["status"] == "ok"
    assert len(good["variants"][0]["step_ms"]["samples"]) == 4


@pytest.mark.parametrize(
    ("name", "fragments"),
    [
        (
            "raises",
            [
                "factory examples/test_steps/bad_steps.py:make_raising raised ValueError: "
                "dataset path /data/missing not found (at examples/test_steps/bad_steps.py:"
            ],
        ),
        ("no-loss", ["returned a dict without 'loss'", "has batch, model, optimizer"]),
        ("vector-loss", ["not a scalar"]),
        ("nan-loss", ["loss is nan"]),
        ("aborts", ["crashed with signal SIGABRT"]),
        # a sleep uses no CPU: not the 5 CPU-s of timeout_s, the wall cap stops it
        ("sleeps", ["timed out: wall cap 20 s passed (4 × timeout_s 5; "]),
        ("not-callable", ["'NOT_A_FUNCTION' is not callable"]),
    ],
)
def test_each_failure_is_recorded_in_one_line(failing_run, name: str, fragments) -> None:
    failed = step(failing_run, name)
    assert failed["status"] == "error"
    said = str(said_error(failed))  # the failure recorded as facts, said by report/
    assert "\n" not in failed["error"] and "\n" not in said
    for fragment in fragments:
        assert fragment in said
    assert all(v["status"] == "error" for v in failed["variants"])
    assert f"[{name}] error:" in failing_run.stderr


def test_cuda_without_gpu_is_a_step_error(failing_run) -> None:
    cuda = step(failing_run, "cuda")
    if failing_run.result["environment"]["device"] == "cuda":
        pytest.skip("this host has a GPU")
    assert cuda["status"] == "error"
    said = str(said_error(cuda))
    assert "device: cuda, but torch" in said and "sees no GPU" in said
