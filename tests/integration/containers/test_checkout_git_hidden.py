"""The job's token, from the checkout, never reaches the comment (issue 29), on the real Docker
engine.

1. The container sees the step's files, never a `.git`: a step that reads the repository's
   `.git/config` (directly, through a committed link `cfg -> .git/config`, and a nested
   checkout's in `vendor/dep`) and raises what it found, as the reproduced attack did, run by
   `compilegate matrix` (one container per version: docker_backend) and by `matrix
   --against` (one container per child, the base a linked worktree whose `.git` is a file:
   child_launcher). The config holds a marker, not a credential, so that the run is not
   refused and what a container can read is what is tested.
2. The composite action's steps as a runner runs them (tests/integration/actions_runner.py),
   on a checkout as actions/checkout leaves it with `persist-credentials: true` (the token's
   header in `.git/config`): the measuring step stops, exit 2, saying to set
   `persist-credentials: false`, and the token is nowhere — not in the sticky comment, the
   job summary, the result documents, nor any step's output.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from actions_runner import Runner
from docker_helpers import LOCAL_TORCH
from fake_github import FakeGitHub

from repo_helpers import REPO_ROOT, TESTS, git

pytestmark = pytest.mark.docker

MARKER = "gitconfig-marker-7f3a"
NESTED_MARKER = "nested-checkout-marker-52c1"
TOKEN = "ghs_persistedByCheckout0123456789abcd"
HEADER = "AUTHORIZATION: basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
REPO = "octo-org/trainer"
EVENT = json.loads((TESTS / "integration/github/data/pull_request.synchronize.json").read_text())
# What a hostile step reads of the checkout's git, raised on one line (the result keeps it).
PEEK = """\
import json
import os
from pathlib import Path

def make_step(device="cpu"):
    root = Path(__file__).resolve().parents[1]
    seen = {}
    for name in (".git/config", "cfg", "vendor/dep/.git/config", ".git"):
        try:
            seen[name] = (root / name).read_text()
        except OSError as exc:
            seen[name] = type(exc).__name__
    try:
        seen["ls .git"] = sorted(os.listdir(root / ".git"))
    except OSError as exc:
        seen["ls .git"] = type(exc).__name__
    raise RuntimeError("peek " + json.dumps(seen))
"""


def repository(tmp_path: Path) -> Path:
    """Two commits of a repository whose step peeks at its git, a link to `.git/config`
    committed, and another checkout in a subfolder (as a second actions/checkout leaves)."""
    repo = tmp_path / "repo"
    (repo / "train").mkdir(parents=True)
    (repo / "train" / "peek.py").write_text(PEEK)
    (repo / "cfg").symlink_to(".git/config")
    (repo / "compilegate.yml").write_text(
        "version: 1\nsteps:\n  - name: peek\n    entry: train/peek.py:make_step\n"
        "    device: cpu\n    variants: [{mode: default}]\n    eager_processes: 1\n"
        "    variant_processes: 1\n    timeout_s: 300\n    numerics: {enabled: false}\n"
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "notes.md").write_text("head\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "head")
    git(repo, "config", "compilegate-test.marker", MARKER)
    nested = repo / "vendor" / "dep"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    git(nested, "config", "compilegate-test.marker", NESTED_MARKER)
    return repo


def everything_written(*folders: Path) -> str:
    return "\n".join(
        p.read_text(errors="replace") for f in folders for p in f.rglob("*") if p.is_file()
    )


def matrix(tmp_path: Path, repo: Path, base_image: str, *extra: str) -> tuple[str, Path]:
    out = tmp_path / f"out{len(extra)}"
    done = subprocess.run(
        [sys.executable, "-P", "-m", "compilegate", "matrix", "--backend", "docker",
         "--base-image", base_image, "--torch", LOCAL_TORCH, "--config",
         str(repo / "compilegate.yml"), "--repo", str(repo), "--out-dir", str(out),
         "--timeout-s", "900", *extra],
        capture_output=True, text=True, check=False, timeout=1800,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner")},
    )  # fmt: skip
    return done.stdout + done.stderr, out


def peeks(document: dict) -> list[dict]:
    """What the step saw, from its error in the result document."""
    text = json.dumps(document)
    found = []
    for step in document["steps"]:
        for error in (step.get("error"), *(v.get("error") for v in step["variants"])):
            if error and "peek " in str(error):
                found.append(json.loads(str(error).split("peek ", 1)[1].rsplit(" (at ", 1)[0]))
    assert found, f"the step did not run: {text[:2000]}"
    return found


def test_no_container_sees_a_dot_git(tmp_path: Path, local_torch_image: Any, base_image: str):
    repo = repository(tmp_path)
    output, out = matrix(tmp_path, repo, base_image)
    paired_output, paired_out = matrix(tmp_path, repo, base_image, "--against", "HEAD~1")
    results = out / f"torch-{LOCAL_TORCH}"
    documents = [json.loads((results / "result.json").read_text())]
    paired = paired_out / f"torch-{LOCAL_TORCH}"
    documents += [json.loads((paired / n).read_text()) for n in ("result.json", "result.base.json")]
    written = everything_written(out, paired_out) + output + paired_output
    assert MARKER not in written and NESTED_MARKER not in written, written[-3000:]
    assert "gitdir:" not in written, "the base worktree's link back to the host's repository"
    for document in documents:
        for seen in peeks(document):
            assert seen["ls .git"] in ([], "NotADirectoryError"), seen  # an empty cover
            assert seen[".git"] in ("", "IsADirectoryError"), seen


def action_runner(tmp_path: Path, workspace: Path, fake: FakeGitHub, summary: Path) -> Runner:
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(EVENT))
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    base_env = {
        "PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8", "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": fake.api_url, "GITHUB_SERVER_URL": fake.web_url,
        "GITHUB_REPOSITORY": REPO, "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event_path), "GITHUB_SHA": "5" * 40,
        "GITHUB_RUN_ID": "77", "GITHUB_STEP_SUMMARY": str(summary), "NO_PROXY": "127.0.0.1",
        # The builds' network (the build_network fixture's): an image is built here when
        # the action's install changed the source tree's metadata.
        **{k: v for k, v in os.environ.items()
           if k.startswith(("PIP_", "DOCKER_")) or k == "COMPILEGATE_BUILD_NETWORK"},
    }  # fmt: skip
    return Runner(
        workspace=workspace, runner_temp=runner_temp, base_env=base_env,
        github={"event": {**EVENT, "repository": {"default_branch": "main"}},
                "repository": REPO, "token": TOKEN},
        action_root=REPO_ROOT, secrets={"GITHUB_TOKEN": TOKEN},
    )  # fmt: skip


def test_the_action_refuses_a_checkout_that_persisted_the_token(
    tmp_path: Path, local_torch_image: Any, base_image: str
) -> None:
    repo = repository(tmp_path)
    # What actions/checkout (v4, v5) writes with its default persist-credentials: true.
    git(repo, "config", "--local", "http.https://github.com/.extraheader", HEADER)
    summary = tmp_path / "summary.md"
    fake = FakeGitHub(REPO, token=TOKEN)
    try:
        pr = EVENT["number"]
        fake.open_pull_request(pr, EVENT["pull_request"]["head"]["sha"], REPO)
        runner = action_runner(tmp_path, repo, fake, summary)
        runner.run_action(
            {"torch": LOCAL_TORCH, "backend": "docker", "gpus": "", "base-image": base_image,
             "against": "none", "allow-missing-baseline": "true", "comment-key": "token-test",
             "github-token": TOKEN}
        )  # fmt: skip
        comments = [c["body"] for c in fake.comments_on(pr)]
    finally:
        fake.close()
    by_name = {r.name.split(" (")[0]: r for r in runner.records}
    measure = by_name["Measure"]
    measured = Path(measure.env["GITHUB_OUTPUT"]).read_text()
    results = Path(measured.split("results-dir=")[1].split()[0])
    places = {
        "the sticky comment": "\n".join(comments),
        "the job summary": summary.read_text() if summary.exists() else "",
        "the results folder": everything_written(results) if results.exists() else "",
        **{f"step {r.name!r}": r.stdout + r.stderr for r in runner.records},
    }
    secret = HEADER.split()[-1]
    leaked = [where for where, text in places.items() if secret in text or TOKEN in text]
    assert not leaked, f"the token is in {', '.join(leaked)}"
    assert "exit-code=2" in measured, measure.stdout[-3000:] + measure.stderr[-3000:]
    assert "persist-credentials: false" in measure.stderr
    assert by_name["Fail the job per the verdict"].returncode == 2
