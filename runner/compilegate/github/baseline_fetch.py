"""`compilegate baseline fetch`: the baseline artifact of the default branch, provenance checked.

The baseline workflow uploads `baseline.json` as an artifact on every push to the default
branch. Anyone who can open a pull request can also upload an artifact of that name (a fork's
`pull_request` run from a branch it named `main` is one), so the artifact is never found by its
name and branch alone: it is taken only from the newest run of the baseline workflow (found
through the workflow-runs API) that

- concluded `success`,
- was started by `push`, `schedule` or `workflow_dispatch` (never `pull_request*`,
  `workflow_run` or anything a pull request can trigger),
- ran on the baseline branch (the repository's default branch unless told otherwise),
- and whose head repository is this repository (not a fork).

The zip is read in memory (never extracted to disk, so no member can write outside the output
file), must hold exactly one JSON document, within the limits of every document read across
a trust boundary (bounded_json.py), and that document must pass the baseline schema before
it is written, atomically. No such run, or no unexpired artifact in one: exit 4
(`BaselineMissing`), with the one line that says how to create it.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from ..bounded_json import DOCUMENT_LIMITS
from ..errors import BaselineError, BaselineMissing
from ..gate.documents import read_result_document
from ..results.document import write_document
from .client import GitHubClient
from .models import WorkflowRun

MAX_MEMBER_BYTES = DOCUMENT_LIMITS.max_bytes  # and read within the rest (bounded_json.py)
TRUSTED_EVENTS = frozenset({"push", "schedule", "workflow_dispatch"})
MAX_RUNS_EXAMINED = 50


def untrusted_because(run: WorkflowRun, repo: str, branch: str) -> str | None:
    """Why this run's artifacts may not serve as the baseline, or None when they may."""
    if run.conclusion != "success":
        return f"concluded {run.conclusion or run.status or 'nothing yet'}"
    if run.event not in TRUSTED_EVENTS:
        return f"started by {run.event}"
    if run.head_branch != branch:
        return f"ran on branch {run.head_branch!r}, not {branch!r}"
    if run.head_repo_full_name != repo or run.repo_full_name != repo:
        return f"its head repository is {run.head_repo_full_name or 'gone'}, not {repo}"
    return None


def fetch_baseline(
    client: GitHubClient,
    repo: str,
    artifact: str,
    branch: str | None,
    out_path: Path,
    *,
    workflow: str,
) -> str:
    """Download, verify and write the baseline; one line saying what was fetched and from
    which run. Raises BaselineMissing when no trusted run has an unexpired artifact."""
    branch = branch or client.get_default_branch(repo)
    examined = 0
    for run in client.list_workflow_runs(repo, workflow, branch=branch):
        examined += 1
        if examined > MAX_RUNS_EXAMINED:
            break
        if untrusted_because(run, repo, branch) is not None:
            continue
        found = next(
            (a for a in client.list_run_artifacts(repo, run.id, name=artifact) if not a.expired),
            None,
        )
        if found is None:
            continue
        document = baseline_from_zip(client.download_artifact_zip(repo, found.id), artifact)
        write_document(document, out_path)
        return (
            f"{out_path}: baseline from artifact {artifact!r} (id {found.id}) of {workflow} "
            f"run {run.id} ({run.event} on {branch} @ {run.head_sha[:12]}, {run.created_at})"
        )
    raise BaselineMissing(
        f"no baseline: no successful push/schedule/workflow_dispatch run of {workflow} on "
        f"{repo}@{branch} has an unexpired artifact {artifact!r}; run {workflow} on {branch} "
        "to record one (or, for a first run only, set allow-missing-baseline: true)"
    )


def baseline_from_zip(data: bytes, artifact: str) -> dict[str, Any]:
    where = f"artifact {artifact!r}"
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise BaselineError(f"{where}: not a zip archive") from None
    members = [m for m in archive.infolist() if not m.is_dir() and m.filename.endswith(".json")]
    if len(members) != 1:
        names = ", ".join(m.filename for m in archive.infolist()) or "nothing"
        raise BaselineError(f"{where}: expected one JSON document, found {names}")
    member = members[0]
    if member.file_size > MAX_MEMBER_BYTES:
        raise BaselineError(f"{where}: {member.filename} is larger than {MAX_MEMBER_BYTES} bytes")
    # The same strict reader as for a baseline file: schema, JSON, duplicate names.
    with tempfile.TemporaryDirectory(prefix="compilegate-fetch-") as folder:
        staged = Path(folder) / Path(member.filename).name
        staged.write_bytes(archive.read(member))
        try:
            return read_result_document(staged, role="baseline")
        except BaselineError as exc:
            raise BaselineError(f"{where}: {exc}") from None
