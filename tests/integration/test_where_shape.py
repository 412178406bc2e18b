"""Where am I, with no Docker engine (issue 52, item 2): DOCKER_HOST names a socket that is not
there, as on a runner pool whose kubernetes mode gives a job no engine. `compilegate where`
and `compilegate matrix --backend docker` say in one line what to use, never a traceback at
the first Docker call; inside a job container (the runner's /__w work folder) the line
points at the image backend. The engine that has no NVIDIA runtime is
tests/integration/containers/test_where_engine_without_gpu.py's."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import QUICK_STEP_SETTINGS, assert_one_line_error, run_cli, write_config


def no_engine(tmp_path: Path, **more: str) -> dict[str, str]:
    return {"DOCKER_HOST": f"unix://{tmp_path}/missing.sock", **more}


def gpu_config(tmp_path: Path) -> Path:
    return write_config(
        tmp_path / "compilegate.yml",
        "  - name: big\n    entry: steps.py:make_step\n    device: cuda\n" + QUICK_STEP_SETTINGS,
    )


def test_where_says_in_one_line_that_there_is_no_engine_and_what_to_use(tmp_path: Path) -> None:
    run = run_cli("where", "--backend", "docker", cwd=tmp_path, env=no_engine(tmp_path))
    assert run.returncode == 2, run.stdout + run.stderr
    (line,) = run.stdout.splitlines()
    assert line.startswith(f"compilegate: no Docker engine at unix://{tmp_path}/missing.sock")
    assert "(no such socket)" in line and "start the engine" in line
    assert "Traceback" not in run.stdout + run.stderr and run.stderr == ""


def test_inside_a_job_container_the_line_points_at_the_image_backend(tmp_path: Path) -> None:
    env = no_engine(tmp_path, GITHUB_WORKSPACE="/__w/trainer/trainer")
    run = run_cli("where", "--annotate", "--config", str(gpu_config(tmp_path)), cwd=tmp_path,
                  env=env)  # fmt: skip
    assert run.returncode == 2, run.stdout + run.stderr
    (line,) = run.stdout.splitlines()
    assert line.startswith("::error title=compilegate::no Docker engine at ")
    assert "inside a job container" in line and "compilegate run --backend image" in line
    image = run_cli("where", "--backend", "image", cwd=tmp_path, env=env)
    assert image.returncode == 0 and "backend image measures with its torch" in image.stdout


def test_matrix_with_no_engine_stops_before_anything_with_the_same_line(tmp_path: Path) -> None:
    run = run_cli(
        "matrix", "--backend", "docker", "--torch", "2.13.0", "--config",
        str(gpu_config(tmp_path)), "--out-dir", str(tmp_path / "out"),
        cwd=tmp_path, env=no_engine(tmp_path),
    )  # fmt: skip
    assert_one_line_error(run, 2, f"no Docker engine at unix://{tmp_path}/missing.sock",
                          "(no such socket)", "backend image")  # fmt: skip
    assert not (tmp_path / "out").exists()
