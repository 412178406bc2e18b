"""Where `compilegate run` writes its result when `--out` is not given: outside the
repository's tracked files, one folder per repository, so a run never leaves a file for
`git add .` to pick up.

    in GitHub Actions   $RUNNER_TEMP/compilegate/<repo>-<hash8>/result.json
    elsewhere           $XDG_CACHE_HOME (or ~/.cache)/compilegate/results/<repo>-<hash8>/result.json

`<repo>` is the repository folder's name, `<hash8>` the first 8 hex digits of the SHA-256 of
its resolved path (two clones with the same name keep their results apart).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path

RESULT_NAME = "result.json"


def default_result_path(repo_root: Path, environ: Mapping[str, str]) -> Path:
    """Where a run of the repository at `repo_root` writes its result by default."""
    root = repo_root.resolve()
    name = re.sub(r"[^A-Za-z0-9._-]", "_", root.name) or "repository"
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:8]
    folder = f"{name}-{digest}"
    if environ.get("GITHUB_ACTIONS") == "true" and environ.get("RUNNER_TEMP"):
        return Path(environ["RUNNER_TEMP"]) / "compilegate" / folder / RESULT_NAME
    cache = environ.get("XDG_CACHE_HOME") or str(
        Path(environ.get("HOME") or Path.home()) / ".cache"
    )
    return Path(cache) / "compilegate" / "results" / folder / RESULT_NAME
