"""git on the runner host never reads configuration the pull request wrote (issue 21).

A pull request cannot commit a `.git`, but it can commit a bare repository in a subfolder
(`sub/HEAD`, `sub/config`, `sub/objects/`, `sub/refs/`); with `working-directory: sub` (or
`--repo sub`), git run *in* that folder discovers it and runs the commands its config names.
Planted here, with real git: `remote.origin.uploadpack` (runs on a fetch) and
`core.fsmonitor` (runs when a checkout refreshes the index), each payload recording that it
ran, printing the token and appending to GITHUB_ENV, as the reproduced attack did.

- The action's base-finding steps (tests/integration/actions_runner.py, the real `run:`
  text of action.yml) with `working-directory: sub`, a token, and `against` a commit only
  the real repository's origin holds (the case that fetches).
- Paired mode's worktree checkout (run/paired.py `checkout`) of `--repo sub`.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml
from actions_runner import Runner, StepRecord, parse_file_command

from compilegate.run.paired import checkout
from repo_helpers import REPO_ROOT, git

TOKEN = "ghs_host-git-test-token"


def payload(marker: Path, name: str) -> str:
    """A shell command that records `name`, prints the token and writes GITHUB_ENV."""
    return (
        f"echo {name}-RAN-ON-HOST >> {marker}; "
        f'echo "token=$GITHUB_TOKEN"; echo "token=$GITHUB_TOKEN" >&2; '
        f'[ -n "$GITHUB_ENV" ] && echo COMPILEGATE_PWNED={name} >> "$GITHUB_ENV"; '
        f'[ -n "$GITHUB_OUTPUT" ] && echo against=pwned >> "$GITHUB_OUTPUT"; false'
    )


@pytest.fixture
def scene(tmp_path: Path) -> dict:
    """upstream (origin) ← repo: base commit, a commit only upstream has, and the pull
    request's commit adding `sub/` as a bare repository holding the base commit."""
    marker = tmp_path / "payloads-that-ran.txt"
    upstream = tmp_path / "upstream.git"
    subprocess.run(["git", "init", "-q", "--bare", str(upstream)], check=True)
    repo = tmp_path / "workspace"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("base\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "remote", "add", "origin", str(upstream))
    git(repo, "push", "-q", "origin", "main")
    elsewhere = tmp_path / "elsewhere"
    git(tmp_path, "clone", "-q", "-b", "main", str(upstream), str(elsewhere))
    (elsewhere / "a.txt").write_text("upstream only\n")
    git(elsewhere, "commit", "-qam", "upstream only")
    upstream_only = git(elsewhere, "rev-parse", "HEAD")
    git(elsewhere, "push", "-q", "origin", "HEAD:refs/heads/other")
    with pytest.raises(subprocess.CalledProcessError):
        git(repo, "cat-file", "-e", f"{upstream_only}^{{commit}}")
    sub = repo / "sub"
    subprocess.run(["git", "init", "-q", "--bare", str(sub)], check=True)
    git(sub, "fetch", "-q", str(repo), "main:refs/heads/main")
    hostile = {
        "core.fsmonitor": payload(marker, "FSMONITOR"),
        "remote.origin.url": str(upstream),
        "remote.origin.uploadpack": f"sh -c '{payload(marker, 'UPLOADPACK')}'; exit 1; :",
    }
    for key, value in hostile.items():
        git(sub, "config", key, value)
    (sub / "refs/tags/.keep").write_text("")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the pull request: a bare repository in sub/")
    assert "sub/config" in git(repo, "ls-files")
    # git run in sub/ does find the planted repository (what the old code did)
    assert git(sub, "rev-parse", "--git-dir") == "."
    return {"repo": repo, "sub": sub, "base": base, "upstream_only": upstream_only,
            "marker": marker, "tmp": tmp_path}  # fmt: skip


def base_steps_action(tmp: Path) -> Path:
    """action.yml with only the steps that find the base (after the install, before the
    measuring step), their `run:` text unchanged."""
    action = yaml.safe_load((REPO_ROOT / "action.yml").read_text())
    steps = action["runs"]["steps"]
    ids = [s.get("id") for s in steps]
    action["runs"]["steps"] = steps[ids.index("base") : ids.index("measure")]
    folder = tmp / "base-steps-action"
    folder.mkdir()
    (folder / "action.yml").write_text(yaml.safe_dump(action, sort_keys=False))
    return folder


def run_base_steps(scene: dict, against: str) -> tuple[Runner, dict]:
    tmp = scene["tmp"]
    runner_temp = tmp / "runner-temp"
    runner_temp.mkdir(exist_ok=True)
    base_env = {
        "PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8", "GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "octo-org/trainer",
        "GITHUB_EVENT_NAME": "pull_request",
    }  # fmt: skip
    event = {"pull_request": {"base": {"sha": scene["base"], "ref": "main"}},
             "repository": {"default_branch": "main"}}  # fmt: skip
    runner = Runner(
        workspace=scene["repo"], runner_temp=runner_temp, base_env=base_env,
        github={"event": event, "repository": "octo-org/trainer", "token": TOKEN},
        action_root=REPO_ROOT,
    )  # fmt: skip
    outputs = runner.run_action(
        {"torch": "2.13.0", "working-directory": "sub", "against": against,
         "github-token": TOKEN},
        base_steps_action(tmp),
    )  # fmt: skip
    return runner, outputs


def assert_no_payload_ran(scene: dict, runner: Runner) -> None:
    marker: Path = scene["marker"]
    ran = marker.read_text() if marker.exists() else ""
    assert not ran, f"the pull request's git config ran on the host: {ran}"
    assert runner.added_env == {}, f"GITHUB_ENV written: {runner.added_env}"
    for record in runner.records:
        assert TOKEN not in record.stdout + record.stderr, f"{record.name} printed the token"
        assert "COMPILEGATE_PWNED" not in record.env
        written = Path(record.env["GITHUB_ENV"]).read_text() if record.env else ""
        assert written == "", f"{record.name}: GITHUB_ENV {written!r}"


def outputs_of(record: StepRecord) -> dict[str, str]:
    return parse_file_command(Path(record.env["GITHUB_OUTPUT"]).read_text())


def test_finding_a_base_only_origin_has_fetches_it_without_the_planted_uploadpack(
    scene: dict,
) -> None:
    runner, _ = run_base_steps(scene, scene["upstream_only"])
    assert_no_payload_ran(scene, runner)
    found, settled = runner.records
    assert found.returncode == 0, found.stdout + found.stderr
    assert "GITHUB_TOKEN" not in found.env, "the step that runs git holds no token"
    assert f"paired mode: measuring {scene['upstream_only']}" in found.stdout
    git(scene["repo"], "cat-file", "-e", f"{scene['upstream_only']}^{{commit}}")  # fetched
    assert settled.returncode == 0, settled.stdout + settled.stderr
    assert settled.env["GITHUB_TOKEN"] == "", "no artifact to fetch: no token"
    assert outputs_of(settled) == {
        "workdir": str(scene["sub"]), "against": scene["upstream_only"], "path": "",
    }  # fmt: skip


def test_finding_the_base_the_checkout_holds_reads_only_the_real_repository(
    scene: dict,
) -> None:
    runner, _ = run_base_steps(scene, scene["base"])
    assert_no_payload_ran(scene, runner)
    found, settled = runner.records
    assert found.returncode == 0 and settled.returncode == 0, found.stderr + settled.stderr
    assert outputs_of(settled)["against"] == scene["base"]


def test_paired_checkout_of_a_subfolder_runs_no_planted_fsmonitor(scene: dict) -> None:
    """`--repo sub --against BASE`: the worktree of BASE comes from the real repository, and
    the tree given back is BASE's `sub/` (none: BASE has no such folder)."""
    with checkout(scene["sub"], scene["base"]) as (tree, sha):
        top = tree.parent if tree.name == "sub" else tree
        base_text = (top / "a.txt").read_text() if (top / "a.txt").exists() else None
        tree_exists = tree.exists()
    ran = scene["marker"].read_text() if scene["marker"].exists() else ""
    assert not ran, f"the pull request's git config ran on the host: {ran}"
    assert sha == scene["base"]
    assert base_text == "base\n", "the real repository's base commit"
    assert not tree_exists, "BASE has no sub/: the base's copy of --repo sub does not exist"
    assert not top.exists()
    assert len(git(scene["repo"], "worktree", "list").splitlines()) == 1
