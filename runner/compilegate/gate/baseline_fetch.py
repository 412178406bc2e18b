"""`compilegate baseline fetch`: the newest baseline artifact of the default branch, verified.

The baseline workflow uploads `baseline.json` as an artifact on every push to the default
branch; the pull-request gate downloads the newest one that has not expired. The zip is read
in memory (never extracted to disk, so no member can write outside the output file), must
hold exactly one JSON document, and that document must pass the baseline schema before it
is written, atomically.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from ..errors import BaselineError, UsageError
from ..github.client import GitHubClient
from ..results.document import write_document
from .documents import read_result_document

MAX_MEMBER_BYTES = 64 * 1024 * 1024


def fetch_baseline(
    client: GitHubClient, repo: str, artifact: str, branch: str | None, out_path: Path
) -> str:
    """Download, verify and write the baseline; one line saying what was fetched."""
    found = next(iter(client.list_repo_artifacts(repo, name=artifact, head_branch=branch)), None)
    if found is None:
        where = f" from branch {branch}" if branch else ""
        raise UsageError(f"no unexpired artifact named {artifact!r}{where} in {repo}")
    document = baseline_from_zip(client.download_artifact_zip(repo, found.id), artifact)
    write_document(document, out_path)
    return (
        f"{out_path}: baseline from artifact {artifact!r} (id {found.id}, "
        f"{found.head_branch or 'unknown branch'} @ {(found.head_sha or '?')[:12]}, "
        f"created {found.created_at or '?'})"
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
