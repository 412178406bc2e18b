"""What a GitHub Actions run tells compilegate through its environment, and what we tell it back.

In: `ActionsContext.from_environ(os.environ)` reads the default variables GitHub sets
(docs: "Store information in variables", default environment variables) and the event
payload at `GITHUB_EVENT_PATH`. A missing or invalid value is a `UsageError` naming the
variable, in one line.

Out: the job summary (`append_step_summary`), step outputs (`write_outputs`, in the
`name<<DELIMITER` form GitHub documents for multiline values) and GitHub's per-step limit on
annotations (`limit_annotations`); an annotation itself, and its workflow command, is the
report's (report/workflow_annotation.py).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..errors import UsageError
from ..report.workflow_annotation import LEVELS, Annotation
from .event_fields import MissingEventField, event_number, event_object

PULL_REQUEST_EVENTS = frozenset({"pull_request", "pull_request_target"})
STEP_SUMMARY_LIMIT_BYTES = 1024 * 1024
"""GitHub rejects a step's job summary over 1 MiB (docs: "Adding a job summary")."""
ANNOTATIONS_PER_LEVEL = 10
"""GitHub shows at most 10 error, 10 warning and 10 notice annotations per step."""
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_OUTPUT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


@dataclass(frozen=True)
class PullRequestRef:
    """The pull request an event is about."""

    number: int
    head_sha: str | None
    head_repo: str | None
    """`owner/name` the PR's branch lives in; None when that fork was deleted."""
    base_repo: str | None

    @property
    def is_fork(self) -> bool:
        """True for a PR from another repository: its `pull_request` token is read-only."""
        return self.head_repo is None or self.head_repo != self.base_repo


@dataclass(frozen=True)
class ActionsContext:
    """The run's GitHub context. Build it with `from_environ`; the token stays out of repr."""

    repository: str
    event_name: str
    sha: str
    api_url: str
    server_url: str
    event_path: Path | None = None
    step_summary_path: Path | None = None
    output_path: Path | None = None
    run_id: str | None = None
    in_github_actions: bool = False
    pull_request: PullRequestRef | None = None
    token: str | None = field(default=None, repr=False)

    @property
    def is_fork(self) -> bool:
        return self.pull_request is not None and self.pull_request.is_fork

    @property
    def head_sha(self) -> str:
        """The commit the report is about: the PR's head when there is one."""
        if self.pull_request is not None and self.pull_request.head_sha:
            return self.pull_request.head_sha
        return self.sha

    @property
    def run_url(self) -> str | None:
        if self.run_id is None:
            return None
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"

    def for_pull_request(self, number: int, *, head_sha: str | None = None) -> ActionsContext:
        """The same context aimed at PR `number`: for a `workflow_run` job posting a fork's
        report, whose payload names no PR (GitHub leaves `pull_requests` empty for forks)."""
        if number < 1:
            raise UsageError(f"pull request number must be positive, got {number}")
        ref = PullRequestRef(number, head_sha, head_repo=None, base_repo=self.repository)
        return replace(self, pull_request=ref)

    @classmethod
    def from_environ(
        cls, environ: Mapping[str, str], token_env: str = "GITHUB_TOKEN"
    ) -> ActionsContext:
        """Read the run's variables and event payload; UsageError names what is wrong."""
        values = {k: v for k, v in environ.items() if k.startswith("GITHUB_") and v != ""}
        missing = [
            n for n in ("GITHUB_REPOSITORY", "GITHUB_EVENT_NAME", "GITHUB_SHA") if n not in values
        ]
        if missing:
            raise UsageError(
                f"environment variable{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                "not set (GitHub Actions sets them; outside Actions, export them yourself)"
            )
        repository = values["GITHUB_REPOSITORY"]
        if not _REPOSITORY.fullmatch(repository):
            raise UsageError(f"GITHUB_REPOSITORY must be owner/name, got {repository!r}")
        event_name = values["GITHUB_EVENT_NAME"]
        event_path = _optional_path(values, "GITHUB_EVENT_PATH")
        payload = _load_event(event_path) if event_path is not None else None
        if payload is None and (event_name in PULL_REQUEST_EVENTS or event_name == "workflow_run"):
            raise UsageError(
                f"GITHUB_EVENT_PATH not set, and a {event_name} event needs its payload"
            )
        return cls(
            repository=repository,
            event_name=event_name,
            sha=values["GITHUB_SHA"],
            api_url=_url(values, "GITHUB_API_URL"),
            server_url=_url(values, "GITHUB_SERVER_URL"),
            event_path=event_path,
            step_summary_path=_optional_path(values, "GITHUB_STEP_SUMMARY"),
            output_path=_optional_path(values, "GITHUB_OUTPUT"),
            run_id=values.get("GITHUB_RUN_ID"),
            in_github_actions=values.get("GITHUB_ACTIONS") == "true",
            pull_request=_pull_request_of(event_name, payload, event_path),
            token=environ.get(token_env) or None,
        )


def _url(values: Mapping[str, str], name: str) -> str:
    """GitHub Actions always sets the API and server URLs (GitHub Enterprise Server has its
    own): nothing here assumes one."""
    url = values.get(name)
    if not url:
        raise UsageError(
            f"environment variable {name} not set (GitHub Actions sets it; outside Actions, "
            "export it yourself)"
        )
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"{name} must be an http(s) URL, got {url!r}")
    return url.rstrip("/")


def _optional_path(values: Mapping[str, str], name: str) -> Path | None:
    return Path(values[name]) if name in values else None


def _load_event(path: Path) -> dict[str, Any]:
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"GITHUB_EVENT_PATH {path}: cannot read it ({exc.strerror})") from exc
    except ValueError as exc:
        raise UsageError(f"GITHUB_EVENT_PATH {path}: not valid JSON ({exc})") from exc
    if not isinstance(payload, dict):
        raise UsageError(f"GITHUB_EVENT_PATH {path}: the event payload is not a JSON object")
    return payload


def _pull_request_of(
    event_name: str, payload: Mapping[str, Any] | None, path: Path | None
) -> PullRequestRef | None:
    """The PR a `pull_request[_target]` event is about, or the first one a `workflow_run`
    names (none for a fork's run); None for every other event."""
    if payload is None:
        return None
    try:
        if event_name in PULL_REQUEST_EVENTS:
            head = event_object(payload, "pull_request.head")
            base = event_object(payload, "pull_request.base")
            return PullRequestRef(
                number=event_number(payload, "pull_request.number"),
                head_sha=head.get("sha"),
                head_repo=(head.get("repo") or {}).get("full_name"),
                base_repo=(base.get("repo") or {}).get("full_name"),
            )
        if event_name == "workflow_run":
            run = event_object(payload, "workflow_run")
            prs = run.get("pull_requests") or []
            if not prs:
                return None
            return PullRequestRef(
                number=event_number(payload, "workflow_run.pull_requests[0].number"),
                head_sha=run.get("head_sha"),
                head_repo=(run.get("head_repository") or {}).get("full_name"),
                base_repo=(run.get("repository") or {}).get("full_name"),
            )
    except MissingEventField as exc:
        raise UsageError(
            f"GITHUB_EVENT_PATH {path}: not a usable {event_name} payload: {exc}"
        ) from None
    except (TypeError, AttributeError) as exc:
        raise UsageError(
            f"GITHUB_EVENT_PATH {path}: not a usable {event_name} payload ({exc})"
        ) from None
    return None


# --- Job summary and step outputs ------------------------------------------------------------


def append_step_summary(
    path: Path | str, markdown: str, *, limit_bytes: int = STEP_SUMMARY_LIMIT_BYTES
) -> bool:
    """Append `markdown` to the step's job summary; True when it had to be cut to fit 1 MiB."""
    target = Path(path)
    used = target.stat().st_size if target.exists() else 0
    text = markdown if markdown.endswith("\n") else markdown + "\n"
    room = limit_bytes - used
    truncated = len(text.encode("utf-8")) > room
    if truncated:
        note = "\n\n*compilegate: the rest of this report did not fit GitHub's 1 MiB summary.*\n"
        keep = max(0, room - len(note.encode("utf-8")))
        head = text.encode("utf-8")[:keep].decode("utf-8", errors="ignore")
        text = (head[: head.rfind("\n") + 1] if "\n" in head else "") + note
        if len(text.encode("utf-8")) > room:
            return True  # not even the note fits: GitHub would reject the whole summary
    with target.open("a", encoding="utf-8") as handle:
        handle.write(text)
    return truncated


def write_outputs(
    path: Path | str,
    outputs: Mapping[str, object],
    *,
    new_delimiter: Callable[[], str] = lambda: f"ghadelimiter_{uuid.uuid4()}",
) -> None:
    """Append each output as `name<<DELIM`, value, `DELIM`: safe for any value.

    The delimiter is random and checked against the value (and drawn again if it occurs
    there), so a value cannot end its own block and set another output.
    """
    blocks = []
    for name, raw in outputs.items():
        if not _OUTPUT_NAME.fullmatch(name):
            raise ValueError(f"output name {name!r}: letters, digits, _ and - only")
        value = "" if raw is None else str(raw)
        delimiter = new_delimiter()
        while delimiter in value or not delimiter.strip() or "\n" in delimiter:
            delimiter = new_delimiter()
        blocks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    with Path(path).open("a", encoding="utf-8") as handle:
        handle.write("".join(blocks))


# --- Annotations -------------------------------------------------------------------------------


@dataclass(frozen=True)
class LimitedAnnotations:
    """The annotations to print (errors, then warnings, then notices) and what was left out."""

    shown: tuple[Annotation, ...]
    dropped: Mapping[str, int]
    """Per level, how many annotations a summary annotation stands in for."""

    @property
    def dropped_total(self) -> int:
        return sum(self.dropped.values())


def limit_annotations(
    annotations: Iterable[Annotation], *, per_level: int = ANNOTATIONS_PER_LEVEL
) -> LimitedAnnotations:
    """At most `per_level` annotations of each level, errors first, in the given order.

    Put the most important first: past the limit the first `per_level - 1` are kept and the
    last place goes to one annotation saying how many more there are, because GitHub would
    otherwise drop the rest without a word.
    """
    items = list(annotations)
    shown: list[Annotation] = []
    dropped: dict[str, int] = {}
    for level in LEVELS:
        of_level = [a for a in items if a.level == level]
        if len(of_level) <= per_level:
            shown.extend(of_level)
            continue
        kept = of_level[: per_level - 1]
        dropped[level] = len(of_level) - len(kept)
        shown.extend(kept)
        shown.append(
            Annotation(
                level=level,  # type: ignore[arg-type]
                title=f"compilegate: {dropped[level]} more {level}s",
                message=(
                    f"{dropped[level]} more {level} annotations are not shown here (GitHub "
                    f"shows {per_level} per level per step); the job summary lists them all."
                ),
            )
        )
    return LimitedAnnotations(shown=tuple(shown), dropped=dropped)
