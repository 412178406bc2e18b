"""run/checkout_credentials.py: a checkout whose git config holds a credential is refused, read
with real git (each way actions/checkout and people persist a token), and the refusal never
shows the token. The CLI and the action: tests/integration/test_checkout_token_refused.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from compilegate.errors import UsageError
from compilegate.run.checkout_credentials import (
    ConfigEntry,
    credential_kind,
    mask_userinfo,
    parse_config_list,
    refuse_persisted_credentials,
)

TOKEN = "ghs_0123456789abcdefTOKEN"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo), *args],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "sub/f.txt").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    git(repo, "remote", "add", "origin", "https://github.com/octo-org/trainer")
    return repo


def refusal(folder: Path) -> str:
    with pytest.raises(UsageError) as refused:
        refuse_persisted_credentials(folder)
    message = str(refused.value)
    assert "\n" not in message and "persist-credentials: false" in message
    assert TOKEN not in message, "the refusal must not show the credential"
    return message


def test_a_clean_checkout_and_a_folder_outside_any_repository_pass(
    repo: Path, tmp_path: Path
) -> None:
    git(repo, "config", "remote.mirror.url", "git@github.com:octo-org/trainer.git")
    git(repo, "config", "remote.ssh.url", "ssh://git@github.com/octo-org/trainer")
    git(repo, "config", "credential.helper", "")  # an empty helper clears the list
    refuse_persisted_credentials(repo)
    refuse_persisted_credentials(repo / "sub")
    (tmp_path / "plain").mkdir()
    refuse_persisted_credentials(tmp_path / "plain")


def test_the_header_actions_checkout_v4_persists_is_refused(repo: Path) -> None:
    git(repo, "config", "--local", "http.https://github.com/.extraheader",
        f"AUTHORIZATION: basic {TOKEN}")  # fmt: skip
    message = refusal(repo / "sub")  # from a subfolder too: the repository's config
    assert "http.https://github.com/.extraheader" in message and ".git/config" in message


def test_a_conditional_include_outside_the_checkout_is_followed(repo: Path, tmp_path: Path) -> None:
    """actions/checkout v6 keeps the header in a file under RUNNER_TEMP, included by
    `includeIf.gitdir:<.git>.path`: git follows it, and so does the check."""
    included = tmp_path / "runner-temp" / "git-credentials-1234.config"
    included.parent.mkdir()
    included.write_text(
        f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {TOKEN}\n'
    )
    git(repo, "config", f"includeIf.gitdir:{repo / '.git'}.path", str(included))
    assert str(included) in refusal(repo)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("credential.helper", "store"),
        ("credential.https://github.com.helper", "!f() { echo password=x; }; f"),
        ("remote.origin.url", f"https://x-access-token:{TOKEN}@github.com/octo-org/trainer"),
        ("remote.origin.pushurl", f"https://{TOKEN}@github.com/octo-org/trainer"),
        (f"url.https://x-access-token:{TOKEN}@github.com/.insteadOf", "https://github.com/"),
        ("submodule.dep.url", f"https://oauth2:{TOKEN}@gitlab.example/dep.git"),
        ("http.proxy", f"http://proxyuser:{TOKEN}@proxy.example:3128"),
    ],
)
def test_helpers_and_urls_with_userinfo_are_refused(repo: Path, key: str, value: str) -> None:
    git(repo, "config", "--local", "--replace-all", key, value)
    message = refusal(repo)
    assert "***" in message or TOKEN not in key


def test_a_linked_worktree_is_judged_by_its_repository_config(repo: Path, tmp_path: Path) -> None:
    """A worktree's `.git` is a file; the token is in the common config it points to."""
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree))
    refuse_persisted_credentials(worktree)
    git(repo, "config", "http.extraheader", f"AUTHORIZATION: bearer {TOKEN}")
    refusal(worktree)


def test_the_checkout_cannot_plant_a_config_that_hides_or_fakes_one(repo: Path) -> None:
    """The pull request's own files are not git config: a committed `.gitconfig`, or a bare
    repository in a subfolder (git refuses to commit a `.git`), changes nothing."""
    (repo / ".gitconfig").write_text('[credential]\n\thelper = ""\n')
    bare = repo / "sub" / "planted"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    subprocess.run(["git", "--git-dir", str(bare), "config", "http.extraheader", "x"], check=True)
    refuse_persisted_credentials(repo / "sub" / "planted")  # the checkout's own config: clean
    git(repo, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {TOKEN}")
    refusal(repo / "sub" / "planted")


def test_an_empty_dot_git_is_no_repository(tmp_path: Path) -> None:
    """What a container sees of the checkout's `.git` (containers/hidden_git.py)."""
    (tmp_path / "w" / ".git").mkdir(parents=True)
    refuse_persisted_credentials(tmp_path / "w")
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / ".git").write_bytes(b"")
    refuse_persisted_credentials(tmp_path / "f")


def test_only_the_repository_scopes_count_and_masks_hide_userinfo() -> None:
    listed = (
        "system\0file:/etc/gitconfig\0credential.helper\nosxkeychain\0"
        "global\0file:/home/u/.gitconfig\0http.extraheader\nx\0"
        "command\0command line:\0core.fsmonitor\nfalse\0"
        "local\0file:.git/config\0core.bare\nfalse\0"
        "local\0file:.git/config\0core.flag\0"
    )
    entries = list(parse_config_list(listed))
    assert [(e.scope, e.key, e.value) for e in entries] == [
        ("local", "core.bare", "false"),
        ("local", "core.flag", None),
    ]
    assert mask_userinfo(f"url.https://u:{TOKEN}@h/.insteadof") == "url.https://***@h/.insteadof"
    blank = ConfigEntry("local", "file:.git/config", "http.extraheader", "")
    assert credential_kind(blank) is None


def test_a_check_that_cannot_run_does_not_pass(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No git on PATH (compilegate's image has none) with a `.git` in sight: refused."""
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    with pytest.raises(UsageError, match="could not be checked for a persisted token"):
        refuse_persisted_credentials(repo)
