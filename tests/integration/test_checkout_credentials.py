"""run/checkout_credentials.py: a checkout whose git config holds a credential is refused, read
with real git (each way actions/checkout and people persist a token, in the repository, its
submodules, its worktrees and other checkouts in its tree), and the refusal never shows the
token. The CLI and the action: tests/integration/test_checkout_token_refused.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from compilegate.errors import UsageError
from compilegate.run.checkout_credentials import (
    ConfigEntry,
    credential_kind,
    mask_userinfo,
    names_ssh_key,
    parse_config_list,
    refuse_persisted_credentials,
)
from compilegate.run.git_configs import repositories_in_reach
from repo_helpers import git

TOKEN = "ghs_0123456789abcdefTOKEN"


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


def submodule_source(tmp_path: Path, name: str, inner: Path | None = None) -> Path:
    """A repository to add as a submodule (with its own submodule `inner`, if given)."""
    source = tmp_path / "sources" / name
    source.mkdir(parents=True)
    git(source, "init", "-q")
    (source / "lib.py").write_text("X = 1\n")
    if inner is not None:
        git(source, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "in")
    git(source, "add", "-A")
    git(source, "commit", "-qm", name)
    return source


def add_submodules(repo: Path, tmp_path: Path) -> None:
    """`dep`, whose own submodule is `in`, checked out recursively: `.git/modules/dep/config`
    and `.git/modules/dep/modules/in/config`, as actions/checkout's `submodules: recursive`."""
    dep = submodule_source(tmp_path, "dep", inner=submodule_source(tmp_path, "inner"))
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(dep), "dep")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init",
        "--recursive")  # fmt: skip
    git(repo, "commit", "-qm", "dep")


@pytest.mark.parametrize(
    "command",
    [
        # actions/checkout v4 with `ssh-key:` (src/git-auth-helper.ts, configureSsh)
        '"/usr/bin/ssh" -i "$RUNNER_TEMP/5d1c0b1e" -o StrictHostKeyChecking=yes '
        '-o CheckHostIP=no -o "UserKnownHostsFile=$RUNNER_TEMP/5d1c0b1e_known_hosts"',
        "ssh -i/home/u/.ssh/deploy",
        "ssh -vvi key",
        "ssh -p 22 -oIdentityFile=key",
        "ssh -o identityfile=key",
        'ssh -o "IdentityFile key"',
        "ssh -o IDENTITYFILE=key -o IdentitiesOnly=yes",
        "ssh -o 'unbalanced",
    ],
)
def test_an_ssh_command_naming_a_key_is_refused(repo: Path, command: str) -> None:
    assert names_ssh_key(command)
    git(repo, "config", "--local", "core.sshCommand", command)
    message = refusal(repo)
    assert "core.sshcommand" in message and "private key" in message
    assert command not in message and "$RUNNER_TEMP" not in message


@pytest.mark.parametrize(
    "command",
    [
        "ssh",
        "ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
        "ssh -p 2222 -l git -o ServerAliveInterval=10",
        "ssh -o IdentitiesOnly=yes -F /etc/ssh/ci_config",
        "",
    ],
)
def test_an_ssh_command_naming_no_key_passes(repo: Path, command: str) -> None:
    assert not names_ssh_key(command)
    git(repo, "config", "--local", "core.sshCommand", command)
    refuse_persisted_credentials(repo)


def test_an_askpass_program_is_refused(repo: Path) -> None:
    git(repo, "config", "--local", "core.askPass", "/tmp/answer-with-token")
    assert "core.askpass" in refusal(repo)


@pytest.mark.parametrize(
    ("module", "where"),
    [("dep", ".git/modules/dep/config"), ("dep/in", ".git/modules/dep/modules/in/config")],
)
def test_a_submodules_config_is_read_recursively(
    repo: Path, tmp_path: Path, module: str, where: str
) -> None:
    """actions/checkout's `submodules:` runs `git submodule foreach --recursive git config
    --local …` with the header (v4, v5): it lands in each submodule's git directory."""
    add_submodules(repo, tmp_path)
    refuse_persisted_credentials(repo)
    git(repo / module, "config", "--local", "http.https://github.com/.extraheader",
        f"AUTHORIZATION: basic {TOKEN}")  # fmt: skip
    message = refusal(repo / "sub")
    assert where in message and "http.https://github.com/.extraheader" in message


def test_a_submodules_conditional_include_is_followed(repo: Path, tmp_path: Path) -> None:
    """actions/checkout v6: `includeIf.gitdir:<.git/modules/dep>.path` in the submodule's
    config names the credentials file under RUNNER_TEMP."""
    add_submodules(repo, tmp_path)
    included = tmp_path / "runner-temp" / "git-credentials-5678.config"
    included.parent.mkdir()
    included.write_text(f'[http "https://github.com/"]\n\textraheader = basic {TOKEN}\n')
    module_git_dir = (repo / ".git" / "modules" / "dep").resolve()
    git(repo / "dep", "config", f"includeIf.gitdir:{module_git_dir}.path", str(included))
    assert str(included) in refusal(repo)


def test_another_checkout_in_the_work_tree_is_read(repo: Path, tmp_path: Path) -> None:
    """actions/checkout with `path: sub/tools`: a repository of its own inside the work tree,
    found from the enclosing repository, and from a folder in no repository."""
    tools = repo / "sub" / "tools"
    tools.mkdir()
    git(tools, "init", "-q")
    refuse_persisted_credentials(repo)
    git(tools, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {TOKEN}")
    assert "sub/tools/.git/config" in refusal(repo)
    plain = tmp_path / "plain"
    (plain / "deep" / "er").mkdir(parents=True)
    git(plain / "deep" / "er", "init", "-q")
    git(plain / "deep" / "er", "config", "credential.helper", "store")
    assert "deep/er/.git/config" in refusal(plain)


def test_another_worktrees_config_is_read(repo: Path, tmp_path: Path) -> None:
    """A linked worktree's own config (`git config --worktree`, extensions.worktreeConfig)
    lies in `.git/worktrees/<id>/config.worktree`, inside the checkout's `.git`."""
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree))
    git(repo, "config", "extensions.worktreeConfig", "true")
    git(worktree, "config", "--worktree", "http.extraheader", f"AUTHORIZATION: bearer {TOKEN}")
    assert "config.worktree" in refusal(repo)
    git(worktree, "config", "--worktree", "--unset", "http.extraheader")
    refuse_persisted_credentials(worktree)
    git(repo, "config", "--worktree", "credential.helper", "store")  # the main worktree's
    assert ".git/config.worktree" in refusal(worktree)


def test_reading_the_other_configs_runs_nothing_they_name(repo: Path, tmp_path: Path) -> None:
    """`git config --list` reads files: a command a nested checkout's or a submodule's config
    names (fsmonitor, hooks, pager, editor, filters, upload-pack, ssh without a key) never
    runs, whoever wrote it."""
    add_submodules(repo, tmp_path)
    tools = repo / "tools"
    tools.mkdir()
    git(tools, "init", "-q")
    marker = tmp_path / "ran"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("pre-commit", "post-checkout", "reference-transaction", "post-index-change"):
        (hooks / hook).write_text(f"#!/bin/sh\necho {hook} >> {marker}\n")
        (hooks / hook).chmod(0o755)
    ran = f"echo ran >> {marker}"
    commands = {
        "core.fsmonitor": ran, "core.hooksPath": str(hooks), "core.pager": ran,
        "pager.config": ran, "core.editor": ran, "sequence.editor": ran, "diff.external": ran,
        "filter.x.clean": ran, "filter.x.process": ran, "remote.origin.uploadpack": ran,
        "core.alternateRefsCommand": ran, "gpg.program": ran, "core.sshCommand": f"sh -c '{ran}'",
        "alias.config": f"!{ran}", "include.path": str(tmp_path / "missing.config"),
    }  # fmt: skip
    for git_dir in (tools / ".git", repo / ".git" / "modules" / "dep"):
        for key, value in commands.items():
            git(repo, "--git-dir", str(git_dir), "config", key, value)
    (tools / ".gitattributes").write_text("* filter=x\n")
    root, repositories = repositories_in_reach(repo)
    assert root == repo.resolve() and len(repositories) == 4  # repo, dep, dep/in, tools
    refuse_persisted_credentials(repo)
    assert not marker.exists(), marker.read_text()


def test_the_walk_follows_no_link_and_has_a_bound(repo: Path, tmp_path: Path) -> None:
    """A link the checkout holds is not followed (it may lead to `/`); a tree larger than
    the bound is refused, not passed over; a `.git` link is refused, as above the folder."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    git(elsewhere, "init", "-q")
    git(elsewhere, "config", "credential.helper", "store")
    (repo / "sub" / "link").symlink_to(elsewhere)
    (repo / "sub" / "root").symlink_to("/")
    refuse_persisted_credentials(repo)
    with pytest.raises(UsageError, match="more than 3 files and folders"):
        repositories_in_reach(repo, limit=3)
    (repo / "sub" / "odd").mkdir()
    (repo / "sub" / "odd" / ".git").symlink_to(elsewhere / ".git")
    with pytest.raises(UsageError, match=r"odd/\.git: a symlink"):
        refuse_persisted_credentials(repo)
