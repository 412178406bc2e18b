"""A checkout that persisted the job's token in its git config is never measured, in any
backend (issue 29).

actions/checkout with its default `persist-credentials: true` writes
`http.https://github.com/.extraheader: AUTHORIZATION: basic <base64 of x-access-token:TOKEN>`
into `.git/config` (v4, v5); v6 writes it into a file under RUNNER_TEMP that `.git/config`
includes. The step here reads `.git/config` from its own folder and raises what it found,
as the reproduced attack did (the exception reached the comment, the summary and the
artifact). Issue 38 adds what else a step could read: actions/checkout's `ssh-key:` (a key
named by core.sshCommand), a submodule's config (`.git/modules/<name>/config`) and another
checkout inside the work tree. The real CLI, the real git: `run` (host), `run --against`
(paired, host), `matrix --backend venv`; each must stop before the step runs, one line,
exit 2, naming `persist-credentials: false` and never the token. The container side, and
the action's steps as a runner runs them: tests/integration/containers/test_checkout_git_hidden.py.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from cli_helpers import run_cli

from repo_helpers import git

TOKEN = "ghs_checkoutPersistedToken0123456789"
HEADER = "AUTHORIZATION: basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
STEP = """\
from pathlib import Path

def make_step(device="cpu"):
    root = Path(__file__).resolve().parents[1]
    Path({ran!r}).write_text("the step ran")
    raise RuntimeError("peek: " + (root / ".git" / "config").read_text())
"""


def checkout(tmp_path: Path) -> Path:
    """A repository of two commits with a step that leaks `.git/config`, as actions/checkout
    leaves it (before the token is written)."""
    repo = tmp_path / "repo"
    (repo / "train").mkdir(parents=True)
    (repo / "train" / "peek.py").write_text(STEP.format(ran=str(tmp_path / "ran")))
    (repo / "compilegate.yml").write_text(
        "version: 1\nsteps:\n  - name: peek\n    entry: train/peek.py:make_step\n"
        "    device: cpu\n    variants: [{backend: eager}]\n    numerics: {enabled: false}\n"
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "notes.md").write_text("head\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "head")
    git(repo, "remote", "add", "origin", "https://github.com/octo-org/trainer")
    return repo


def persist_v4(repo: Path, tmp_path: Path) -> None:
    git(repo, "config", "--local", "http.https://github.com/.extraheader", HEADER)


def persist_v6(repo: Path, tmp_path: Path) -> None:
    included = tmp_path / "runner-temp" / "git-credentials-0c8d.config"
    included.parent.mkdir()
    included.write_text(f'[http "https://github.com/"]\n\textraheader = {HEADER}\n')
    git(repo, "config", "--local", f"includeIf.gitdir:{repo / '.git'}.path", str(included))


def token_in_url(repo: Path, tmp_path: Path) -> None:
    url = f"https://x-access-token:{TOKEN}@github.com/octo-org/trainer"
    git(repo, "remote", "set-url", "origin", url)


def persist_ssh_key(repo: Path, tmp_path: Path) -> None:
    """actions/checkout's `ssh-key:` (src/git-auth-helper.ts, configureSsh): the key under
    RUNNER_TEMP, and core.sshCommand naming it."""
    key = tmp_path / "runner-temp" / "5d1c0b1e-6f0b-4a43-9d3a-6c1f0e6a2b7d"
    key.parent.mkdir(exist_ok=True)
    key.write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{TOKEN}\n")
    command = (
        f'"/usr/bin/ssh" -i "$RUNNER_TEMP/{key.name}" -o StrictHostKeyChecking=yes '
        f'-o CheckHostIP=no -o "UserKnownHostsFile=$RUNNER_TEMP/{key.name}_known_hosts"'
    )
    git(repo, "config", "--local", "core.sshCommand", command)


def persist_in_submodule(repo: Path, tmp_path: Path) -> None:
    """actions/checkout's `submodules: true` persists the header in each submodule's config
    (`git submodule foreach git config --local …`): `.git/modules/<name>/config`."""
    dep = tmp_path / "dep"
    dep.mkdir()
    git(dep, "init", "-q", "-b", "main")
    (dep / "lib.py").write_text("X = 1\n")
    git(dep, "add", "-A")
    git(dep, "commit", "-qm", "dep")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(dep), "dep")
    git(repo, "commit", "-qm", "add dep")
    git(repo / "dep", "config", "--local", "http.https://github.com/.extraheader", HEADER)


def persist_in_nested_checkout(repo: Path, tmp_path: Path) -> None:
    """A second actions/checkout with `path: tools` into the work tree: its own `.git`."""
    tools = repo / "tools"
    tools.mkdir()
    git(tools, "init", "-q", "-b", "main")
    git(tools, "config", "--local", "http.https://github.com/.extraheader", HEADER)


PERSISTED = {
    "checkout-v4": persist_v4, "checkout-v6": persist_v6, "remote-url": token_in_url,
    "ssh-key": persist_ssh_key, "submodule": persist_in_submodule,
    "nested-checkout": persist_in_nested_checkout,
}  # fmt: skip
WHERE = {  # the file the refusal names, when not the repository's own .git/config
    "checkout-v6": "git-credentials-0c8d.config",
    "submodule": ".git/modules/dep/config",
    "nested-checkout": "tools/.git/config",
}
COMMANDS = {
    "run": ["run", "--out", "{out}/result.json"],
    "run --against": ["run", "--out", "{out}/result.json", "--against", "HEAD~1"],
    "matrix --backend venv": [
        "matrix", "--backend", "venv", "--torch", "2.13.0", "--out-dir", "{out}",
    ],
}  # fmt: skip


@pytest.mark.parametrize("persisted", PERSISTED)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_persisted_token_stops_the_run_before_the_step(
    tmp_path: Path, persisted: str, command: str
) -> None:
    repo = checkout(tmp_path)
    PERSISTED[persisted](repo, tmp_path)
    args = [a.format(out=tmp_path / "out") for a in COMMANDS[command]]
    done = run_cli(
        *args, "--config", str(repo / "compilegate.yml"), "--repo", str(repo), timeout=600
    )
    output = done.stdout + done.stderr
    assert not (tmp_path / "ran").exists(), f"the step ran: {output[-2000:]}"
    assert done.returncode == 2, output[-2000:]
    assert "persist-credentials: false" in done.stderr
    assert WHERE.get(persisted, ".git/config") in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in output
    assert TOKEN not in output and HEADER.split()[-1] not in output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*"))


def test_without_the_token_the_same_checkout_is_measured(tmp_path: Path) -> None:
    """The refusal is the credential's, not the repository's: persist-credentials: false."""
    repo = checkout(tmp_path)
    done = run_cli(
        "run", "--config", str(repo / "compilegate.yml"), "--repo", str(repo),
        "--out", str(tmp_path / "out" / "result.json"), timeout=600,
    )  # fmt: skip
    assert (tmp_path / "ran").exists(), done.stderr[-2000:]
    assert done.returncode == 3 and "persist-credentials" not in done.stderr
