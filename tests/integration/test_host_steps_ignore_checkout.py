"""Nothing of the pull request's checkout runs on the runner host.

A pull request can add any file to its repository. Planted at the checkout's root:
`venv.py`, `site.py`, `sitecustomize.py`, `usercustomize.py`, `json.py` (standard library
names), `yaml.py`, `requests.py`, `docker.py` (compilegate's dependencies) and
`compilegate.py` (compilegate itself). Each, if imported by any host-side Python, records
its name and appends a variable to GITHUB_ENV, as the reproduced attack did to reach the
step that holds the token. Then every `run:` step of action.yml and of every shipped
workflow runs as the runner runs it (tests/integration/actions_runner.py), with `if:`
ignored so that each one executes. No planted module may run, and no later step may see the
injected variable.

No Docker here: the measuring step is pointed at a Docker socket that does not exist, so
compilegate starts (imports, reads the config) and stops with a usage error — the host-side
start is what is under test; the container is tests/integration/containers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from actions_runner import Runner
from fake_github import FakeGitHub

from repo_helpers import REPO_ROOT, TESTS

REPO = "octo-org/trainer"
TOKEN = "ghs_plant-test-token"
PLANTED = (
    "venv", "site", "sitecustomize", "usercustomize", "json",
    "yaml", "requests", "docker", "compilegate",
)  # fmt: skip
WORKFLOWS = sorted((REPO_ROOT / "examples/workflows").glob("*.yml")) + sorted(
    (REPO_ROOT / ".github/workflows").glob("*.yml")
)
# ci.yml runs this project's own test suite on a GitHub-hosted runner: there the checkout is
# the code under test by design (and no GPU runner, token or Docker socket is at stake).
NOT_RUN = {"ci.yml": "runs the project's own tests on a GitHub-hosted runner"}


def plant(checkout: Path, marker: Path) -> None:
    for name in PLANTED:
        (checkout / f"{name}.py").write_text(
            "import os\n"
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n"
            "if os.environ.get('GITHUB_ENV'):\n"
            "    open(os.environ['GITHUB_ENV'], 'a').write("
            f"'COMPILEGATE_PWNED={name}\\n')\n"
        )


def checkout_of_this_action(destination: Path) -> None:
    """A stand-in for actions/checkout of compilegate itself: its tracked files."""
    files = (
        subprocess.run(
            ["git", "-C", str(REPO_ROOT), "ls-files", "-z"], capture_output=True, check=True
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, files):
        source = REPO_ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


def stand_ins(workspace: Path) -> dict:
    def checkout(step: dict, given: dict, runner: Runner) -> dict:
        path = workspace / given.get("path", ".")
        path.mkdir(parents=True, exist_ok=True)
        if "path" in given and not (path / "action.yml").exists():  # this action's source
            checkout_of_this_action(path)
        return {}

    def download(step: dict, given: dict, runner: Runner) -> dict:
        (workspace / given.get("path", ".")).mkdir(parents=True, exist_ok=True)
        return {}

    return {
        "actions/checkout@": checkout,
        "actions/download-artifact@": download,
        "actions/upload-artifact@": lambda step, given, runner: {},
    }


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("plant")
    checkout = root / "checkout"
    checkout.mkdir()
    (checkout / "compilegate.yml").write_text(
        "version: 1\nsteps:\n  - name: tiny\n    entry: train.py:make_step\n    device: cpu\n"
    )
    (checkout / "train.py").write_text("def make_step(device='cpu'):\n    raise SystemExit\n")
    (checkout / "examples/gpu").mkdir(parents=True)
    shutil.copy(checkout / "compilegate.yml", checkout / "examples/gpu/compilegate.yml")
    marker = root / "planted-modules-that-ran.txt"
    plant(checkout, marker)
    runner_temp = root / "runner-temp"
    runner_temp.mkdir()
    event = json.loads(
        (TESTS / "integration/github/data/pull_request.synchronize.json").read_text()
    )
    event["workflow_run"] = {
        "id": 7, "event": "pull_request", "conclusion": "success",
        "head_sha": event["pull_request"]["head"]["sha"],
        "head_repository": {"full_name": REPO},
    }  # fmt: skip
    fake = FakeGitHub(REPO, token=TOKEN)
    yield {"root": root, "checkout": checkout, "marker": marker, "runner_temp": runner_temp,
           "event": event, "fake": fake}  # fmt: skip
    fake.close()


def make_runner(scene: dict, workspace: Path, matrix: dict | None = None) -> Runner:
    event_path = scene["root"] / "event.json"
    event_path.write_text(json.dumps(scene["event"]))
    base_env = {
        "PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8",
        "GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": REPO, "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event_path), "GITHUB_SHA": "5" * 40, "GITHUB_RUN_ID": "77",
        "GITHUB_API_URL": scene["fake"].api_url, "GITHUB_SERVER_URL": scene["fake"].web_url,
        "GITHUB_STEP_SUMMARY": str(scene["root"] / "summary.md"), "NO_PROXY": "127.0.0.1",
        # compilegate starts, then finds no engine: the container is not what is tested here
        "DOCKER_HOST": f"unix://{scene['root']}/no-docker.sock",
        **{k: v for k, v in os.environ.items() if k.startswith("PIP_")},
    }  # fmt: skip
    github = {
        "event": scene["event"], "event_name": "pull_request", "repository": REPO,
        "token": TOKEN, "action_path": str(REPO_ROOT), "sha": "5" * 40,
    }  # fmt: skip
    return Runner(
        workspace=workspace, runner_temp=scene["runner_temp"], base_env=base_env,
        github=github, action_root=REPO_ROOT, matrix=matrix, secrets={"GITHUB_TOKEN": TOKEN},
        stand_ins=stand_ins(workspace), run_every_step=True, timeout_s=900,
    )  # fmt: skip


def first_combination(job: dict, checkout: Path) -> dict:
    matrix = ((job.get("strategy") or {}).get("matrix")) or {}
    if isinstance(matrix, str):  # fromJSON(a job's output): `compilegate plan`'s first leg
        planned = subprocess.run(
            [sys.executable, "-m", "compilegate", "plan", "--torch", "2.13.0",
             "--config", str(checkout / "compilegate.yml")],
            capture_output=True, text=True, check=True, timeout=120,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner")},
        )  # fmt: skip
        return dict(json.loads(planned.stdout)["include"][0])
    return {k: v[0] for k, v in matrix.items() if isinstance(v, list) and v}


def assert_nothing_ran(scene: dict, runner: Runner, what: str, *, python: bool = True) -> None:
    ran = scene["marker"].read_text().split() if scene["marker"].exists() else []
    executed = [r for r in runner.records if r.returncode is not None]
    assert executed, f"{what}: no run: step executed"
    assert not ran, f"{what}: the checkout's {sorted(set(ran))} ran on the host; " + "; ".join(
        f"{r.name}: rc {r.returncode} in {r.cwd}" for r in executed
    )
    for record in executed:
        assert "COMPILEGATE_PWNED" not in record.env, (
            f"{what}: {record.name} saw GITHUB_ENV injection"
        )
    if python:  # else the test would prove nothing
        scripts = [Path(r.env["GITHUB_OUTPUT"].replace("output_", "script_")) for r in executed]
        assert any("python" in s.read_text() for s in scripts), f"{what}: no step started Python"


def test_every_action_step_ignores_the_checkout(scene: dict) -> None:
    runner = make_runner(scene, scene["checkout"])
    runner.run_action({"torch": "2.13.0", "baseline-artifact": "compilegate-baseline",
                       "github-token": TOKEN, "allow-missing-baseline": "true"})  # fmt: skip
    assert_nothing_ran(scene, runner, "action.yml")
    install = next(r for r in runner.records if r.name == "Install compilegate")
    assert install.returncode == 0, install.stderr[-2000:]
    assert (scene["runner_temp"] / "compilegate-venv/bin/python").exists()
    # compilegate itself started in the measuring step (and stopped at the missing engine)
    measure = next(r for r in runner.records if r.name.startswith("Measure"))
    assert "no Docker engine at" in measure.stderr + measure.stdout, measure.stderr[-2000:]


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_workflow_step_ignores_the_checkout(scene: dict, workflow: Path) -> None:
    if workflow.name in NOT_RUN:
        pytest.skip(NOT_RUN[workflow.name])
    document = yaml.safe_load(workflow.read_text())
    workspace = scene["root"] / f"ws-{workflow.stem}"
    if not workspace.exists():
        shutil.copytree(scene["checkout"], workspace)
    for job_id, job in document["jobs"].items():
        runner = make_runner(scene, workspace, first_combination(job, scene["checkout"]))
        runner.run_job(document, job_id)
        executed = [r for r in runner.records if r.returncode is not None]
        text = yaml.safe_dump(job.get("steps"))
        starts_python = "python" in text or "compilegate/compilegate@" in text or "uses: ./" in text
        if executed:
            assert_nothing_ran(scene, runner, f"{workflow.name} job {job_id}", python=starts_python)
