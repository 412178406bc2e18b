"""Refuse to measure a checkout whose git config holds a credential.

actions/checkout with its default `persist-credentials: true`, or with a personal token,
leaves the job's token where the checkout's own git can find it: v4/v5 write it into
`.git/config` (`http.https://github.com/.extraheader: AUTHORIZATION: basic …`), v6 into a
file under RUNNER_TEMP that `.git/config` includes (`includeIf.gitdir:….path`). Any code
that can read the checkout can then read the token: a head step read it and raised it, and
it reached the sticky comment, the job summary and the uploaded artifact (issue 29). The
containers never see a `.git` (containers/hidden_git.py), but a venv or host run can, and a
token in a runner's checkout is one mistake away from leaking; so every `run` and `matrix`,
in every backend, stops first: one line, exit 2, saying to set `persist-credentials: false`.

The config is read by real git (its includes and conditional includes followed, as git
itself would when fetching), through run/host_git.py's hardened call against the
repository's own `.git` — never one the pull request could plant. Not only the enclosing
repository's config (issue 38): every git directory a step could read, found by
run/git_configs.py without running git — each submodule's (`.git/modules/…`, where
actions/checkout's `submodules:` persists the same header or include), each linked
worktree's, and every other checkout in the work tree (actions/checkout with `path:` into a
subfolder), each by the same hardened call. `git config --list` runs nothing a config names
(no fsmonitor, hook, pager, ssh or credential helper: it only reads files, includes
included), and each git directory read was made by git or the workflow, never committed:
tests/integration/test_checkout_credentials.py plants every command-naming key there and sees none
run. Only the repositories' scopes count (`local`, `worktree`, and what they include): the
runner's system and global config are the operator's, never mounted into a container.
A credential is:

- an HTTP header git adds (`http.extraheader`, `http.<url>.extraheader`);
- a credential helper (`credential.helper`, `credential.<url>.helper`), or `core.askPass`;
- an ssh command naming a private key (`core.sshCommand` with `-i FILE` or
  `-o IdentityFile=FILE`, the keyword in any case): actions/checkout's `ssh-key:` persists
  `"ssh" -i "$RUNNER_TEMP/<guid>" -o StrictHostKeyChecking=yes …`, and the key file lies
  beside the job's other files. An ssh command without one (`-F` names a file this does not
  read), and ssh's own `~/.ssh`, are not the checkout's;
- a URL with userinfo anywhere in a key or a value (`remote.origin.url`,
  `url.<base>.insteadOf`, `submodule.<name>.url`, …): a password (`user:pass@`), or any
  user on a scheme other than ssh (`https://TOKEN@github.com/…` authenticates as the token).

The refusal names the key (its userinfo masked) and the file, never the value. A config git
cannot read, or no git at all (compilegate's image has none: run it with the `.git` covered,
as `matrix` does), is refused too: a check that cannot run does not pass.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from .git_configs import repositories_in_reach
from .host_git import run_git

REPOSITORY_SCOPES = ("local", "worktree")
# scheme://userinfo@ — userinfo up to the first @ before the host's end.
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*)://([^/?#@\s]+)@")
_USER_ONLY_SCHEMES = ("ssh", "git+ssh", "ssh+git")  # `ssh://git@host/…` names no secret


@dataclass(frozen=True)
class ConfigEntry:
    """One `git config --list` entry: where it came from, its key and its value."""

    scope: str
    origin: str
    key: str
    value: str | None  # None: a key without `=` (boolean true)


def refuse_persisted_credentials(folder: Path) -> None:
    """UsageError (exit 2) when a git config a step given `folder` could read keeps a
    credential (module docstring): the enclosing repository's, its submodules' and worktrees',
    and every other checkout's in its work tree (run/git_configs.py)."""
    root, repositories = repositories_in_reach(folder)
    for repo in repositories:
        try:
            listed = run_git(
                repo, "config", "--list", "--show-scope", "--show-origin", "--includes", "-z"
            )
        except UsageError as exc:  # no git here (an image), or a config git cannot parse
            raise UsageError(
                f"{repo.git_dir}: its git config could not be checked for a persisted token "
                f"({exc}): run where git is installed, or mount an empty folder over its .git"
            ) from None
        for entry in parse_config_list(listed):
            kind = credential_kind(entry)
            if kind is not None:
                raise UsageError(
                    f"{root}: a git config the measured code could read holds {kind} "
                    f"({mask_userinfo(entry.key)}, {entry.origin}): check out with "
                    "actions/checkout's `persist-credentials: false` (and no token in remote "
                    "URLs, no key in core.sshCommand, in any repository's git config there)"
                )


def parse_config_list(listed: str) -> Iterator[ConfigEntry]:
    """The entries of `git config --list --show-scope --show-origin -z`: scope, origin and
    `key\\nvalue` (or a bare `key`), each ended by NUL; the repository's scopes only."""
    fields = listed.split("\0")
    for index in range(0, len(fields) - 2, 3):
        scope, origin, pair = fields[index : index + 3]
        if scope not in REPOSITORY_SCOPES:
            continue
        key, newline, value = pair.partition("\n")
        yield ConfigEntry(scope, origin, key, value if newline else None)


def credential_kind(entry: ConfigEntry) -> str | None:
    """What credential `entry` holds, in words; None when it holds none."""
    section, _, rest = entry.key.partition(".")
    subsection, _, name = rest.rpartition(".")
    section, name = section.lower(), name.lower()
    value = (entry.value or "").strip()
    if section == "http" and name == "extraheader" and value:
        return "an HTTP header for git's requests (the token actions/checkout persists)"
    if section == "credential" and name == "helper" and value:
        return "a credential helper"
    if section == "core" and not subsection and name == "askpass" and value:
        return "a program that answers git's password prompts"
    if section == "core" and not subsection and name == "sshcommand" and names_ssh_key(value):
        return "an ssh command naming a private key (what actions/checkout's `ssh-key` persists)"
    if any(_has_credential_url(text) for text in (subsection, value)):
        return "a URL with credentials"
    return None


def _has_credential_url(text: str) -> bool:
    return any(
        ":" in userinfo or scheme.lower() not in _USER_ONLY_SCHEMES
        for scheme, userinfo in _URL_USERINFO.findall(text)
    )


def mask_userinfo(text: str) -> str:
    """`text` with every URL's userinfo replaced by `***`."""
    return _URL_USERINFO.sub(lambda m: f"{m.group(1)}://***@", text)


# ssh's options that take an argument (OpenSSH's getopt string, ssh.c); `-i` names an identity
# file, and so does `-o IdentityFile=…` (any case, `=` or blanks between keyword and value).
_SSH_OPTIONS_WITH_ARGUMENT = frozenset("BbcDEeFIiJLlmOoPpQRSWw")
_SSH_KEYWORD = re.compile(r"\s*([A-Za-z0-9]+)")


def names_ssh_key(command: str) -> bool:
    """Whether an ssh command line (`core.sshCommand`, run by the shell) names a private key:
    `-i FILE` (also `-iFILE`, `-vi FILE`) or `-o IdentityFile=FILE` (also `-oIdentityFile`,
    `-o "IdentityFile FILE"`). A line the shell's quoting cannot split is taken to name one:
    a check that cannot run does not pass."""
    try:
        words = shlex.split(command)
    except ValueError:
        return bool(command.strip())
    position = 1  # words[0] is the program
    while position < len(words):
        word, position = words[position], position + 1
        if not word.startswith("-") or word.startswith("--") or word == "-":
            continue
        for index, letter in enumerate(word[1:], start=1):
            if letter not in _SSH_OPTIONS_WITH_ARGUMENT:
                continue
            argument = word[index + 1 :]
            if not argument and position < len(words):
                argument, position = words[position], position + 1
            if letter == "i":
                return True
            keyword = _SSH_KEYWORD.match(argument) if letter == "o" else None
            if keyword is not None and keyword.group(1).lower() == "identityfile":
                return True
            break  # the rest of the word was the option's argument
    return False
