"""What Dynamo's log records say, on every PyTorch version 2.1-2.14 (pure text parsing).

The `graph_breaks` and `recompiles` artifact records, the recompile-limit WARNING and the
2.1-2.5 INFO record of a frame skipped for a graph break in a loop change wording between
versions (../shared/reference/torch-compile-instrumentation.md §3.2, §4.1); each parser here
accepts every known form and returns plain dicts. `PathClassifier` tells the user's files from
torch's, installed packages' and compilegate's own. No torch import at module level:
diagnostics.py (child process) uses these, unit tests feed them verbatim record texts.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..paths import is_inside

HARNESS_DIR = Path(__file__).resolve().parents[1]  # the compilegate package
_SYSCONFIG_ROOTS = ("stdlib", "platstdlib", "purelib", "platlib")
# An absolute POSIX path inside free text (a reason, a guard): /a/b..., up to a quote, space,
# colon or bracket.
_ABS_PATH_RE = re.compile(r"(?<![\w./~-])/(?:[\w.+@~-]+/)+[\w.+@~-]+")

_GB_NEW_RE = re.compile(
    r"^Graph break in user code at (?P<file>.+?):(?P<line>\d+)\n"
    r"(?:Graph Break )?Reason: (?P<body>.*)",
    re.S,
)  # 2.6+
_GB_DUP_RE = re.compile(
    r"^Graph break \((?:details suppressed|user stack suppressed[^)]*)\) "
    r"in user code at (?P<file>.+?):(?P<line>\d+)\n"
    r"(?:Graph Break )?Reason: (?P<body>.*)",
    re.S,
)  # 2.6+ repeats
_GB_OLD_RE = re.compile(
    r"^Graph break: (?P<skip>skip: )?(?P<reason>.*?)\s*from user code at:\n"
    r"(?P<stack>.*)",
    re.S,
)  # 2.1-2.5 (2.3-2.5: reason only in exc_info)
_FILE_LINE_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>[^\s]+)')
_LOOP_SKIP_RE = re.compile(
    r"Skipping frame because there is a graph break in a for/while loop"
    r"\n<FrameSummary file (?P<file>.+?), line (?P<line>\d+) in "
    r"(?P<fn>[^>\s]+)>"
)
_RC_RE = re.compile(r"Recompiling function (?P<fn>.+?) in (?P<file>.+?):(?P<line>\d+)\s*$", re.M)
_LIMIT_RE = re.compile(
    r"torch\._dynamo hit config\.(?P<limit>\w+) \((?P<value>\d+)\)"
    r"(?:\s*\n\s*function: '(?P<fn>[^']*)' \((?P<file>.+?):(?P<line>\d+)\))?"
    r"(?:\s*\n\s*last reason: (?P<reason>[^\n]*))?"
)
_CLASS_RE = re.compile(r"<class '(?:[\w.]+\.)?(\w+)'>")
_FALLBACK_MARKERS = ("falling back to eager", "graph break in loop")
_NOISE_PREFIXES = (
    "Encountered graph break",  # "when attempting to trace ...", 2.13 "that we cannot resume"
    "Failed to handle graph break",
    "*** While handling",
    "For more details",
    "Developer debug context",
)


class PathClassifier:
    """Shows a file repo- or package-relative and says whose code it is.

    Origins: "repo" (the user's repository), "library" (an installed package, the standard
    library, anything else outside the repository), "torch" (torch's own code) and "harness"
    (compilegate's training loop). Absolute paths of the machine that measured never reach a
    result: `transformers/models/gpt2/modeling_gpt2.py`, not `/root/.venv/lib/.../site-packages/`.
    """

    def __init__(
        self,
        repo_root: Path | str,
        internal: Mapping[str, Path | str],
        import_roots: Iterable[Path | str] = (),
    ) -> None:
        self.repo_root = Path(os.path.abspath(repo_root))
        # label -> folder, shown as label/relative: torch's own code and compilegate's.
        self.internal = {label: Path(os.path.abspath(p)) for label, p in internal.items()}
        # sys.path-like folders, deepest first: a file under one is shown as its module path.
        roots = {Path(os.path.abspath(p)) for p in import_roots}
        roots = {root for root in roots if len(root.parts) > 2}  # never relative to / or /usr
        self.import_roots = sorted(roots, key=lambda p: len(p.parts), reverse=True)

    @classmethod
    def for_torch(cls, repo_root: Path) -> PathClassifier:
        internal = {"compilegate": HARNESS_DIR}
        with contextlib.suppress(Exception):
            import torch

            internal["torch"] = Path(torch.__file__).parent
        roots = [p for p in sys.path if p and os.path.isabs(p)]
        with contextlib.suppress(Exception):
            import sysconfig

            roots.extend(sysconfig.get_paths()[key] for key in _SYSCONFIG_ROOTS)
        return cls(repo_root, internal, roots)

    def locate(self, file: str | None) -> tuple[str, str]:
        """(path to show, origin) of one file."""
        if not file:
            return "<unknown>", "library"
        if file.startswith("<"):  # <string>, <eval_with_key>.3: generated code
            return file, "library"
        path = Path(os.path.abspath(os.path.join(self.repo_root, file)))
        for label, root in self.internal.items():
            if is_inside(path, root):
                origin = "torch" if label == "torch" else "harness"
                return f"{label}/{path.relative_to(root).as_posix()}", origin
        parts = path.parts
        for marker in ("site-packages", "dist-packages"):  # also a venv inside the repository
            if marker in parts:
                return "/".join(parts[len(parts) - parts[::-1].index(marker) :]), "library"
        if is_inside(path, self.repo_root):
            return path.relative_to(self.repo_root).as_posix(), "repo"
        for root in self.import_roots:
            if is_inside(path, root) and path != root:
                return path.relative_to(root).as_posix(), "library"
        return ".../" + "/".join(parts[-2:]), "library"  # nothing to be relative to

    def classify(self, file: str | None) -> tuple[str, bool]:
        """(path to show, inside the user's repository and not a library or compilegate)."""
        shown, origin = self.locate(file)
        return shown, origin == "repo"

    def relativize(self, text: str) -> str:
        """Every absolute path in a reason or guard text, shown as `locate` shows it."""
        return _ABS_PATH_RE.sub(lambda match: self.locate(match.group(0))[0], text)


def parse_graph_break_record(text: str, exc_text: str = "") -> dict[str, Any] | None:
    """A `graph_breaks` artifact record → {file, line, function, reason, duplicate, fallback}."""
    for regex, duplicate in ((_GB_NEW_RE, False), (_GB_DUP_RE, True)):
        match = regex.match(text)
        if match:
            body = match["body"].split("\nUser code traceback:")[0]
            stack = _FILE_LINE_RE.findall(text.split("\nUser code traceback:", 1)[-1])
            return {
                "file": match["file"],
                "line": int(match["line"]),
                "function": stack[-1][2] if stack and not duplicate else None,
                "reason": summarize_reason(body),
                "duplicate": duplicate,
                "fallback": any(m in body for m in _FALLBACK_MARKERS),
            }
    match = _GB_OLD_RE.match(text)
    if not match:
        return None
    frames = _FILE_LINE_RE.findall(match["stack"])
    if not frames:
        return None
    file, line, function = frames[-1]
    reason = match["reason"].strip()
    if not reason and exc_text.strip():
        reason = exc_text.strip().splitlines()[0]
    return {
        "file": file,
        "line": int(line),
        "function": function,
        "reason": summarize_reason(reason or "unknown reason"),
        "duplicate": False,
        "fallback": bool(match["skip"]),
    }


def summarize_reason(body: str) -> str:
    """One readable line: the break type (2.7+ gb_type line) and its explanation."""
    lines = [ln for ln in body.splitlines() if ln.strip()]
    head = next(
        (
            ln.strip()
            for ln in lines
            if not ln.startswith(" ") and not ln.strip().startswith(_NOISE_PREFIXES)
        ),
        lines[0].strip() if lines else "unknown reason",
    )
    explanation = next(
        (
            ln.strip()[len("Explanation:") :].strip()
            for ln in lines
            if ln.strip().startswith("Explanation:")
        ),
        "",
    )
    head = _CLASS_RE.sub(r"\1", head).strip("'\"")
    if head.startswith("generic_jump"):  # 2.1-2.5 internal name of a data-dependent branch
        head = f"Data-dependent branching ({head})"
    text = f"{head}. {explanation}" if explanation and explanation not in head else head
    return text if len(text) <= 300 else text[:297] + "..."


def parse_recompile_record(text: str) -> dict[str, Any] | None:
    """A `recompiles` record (2.1 tuple joined by newlines, 2.2+ text) → function, file, reasons."""
    match = _RC_RE.search(text)
    if not match:
        return None
    reasons = []
    for raw in text[match.end() :].splitlines():
        line = raw.strip()
        if line.startswith("triggered by the following guard failure"):
            rest = line.split(":", 1)[1].strip()  # 2.1 puts the reason on this line
            if rest:
                reasons.append(rest)
        elif line.startswith("- "):
            item = line[2:]
            if item.startswith(" ") or item.startswith("User stack trace"):  # 2.11+ stack lines
                continue
            reasons.append(" ".join(item.split()))
    return {
        "function": match["fn"],
        "file": match["file"],
        "line": int(match["line"]),
        "reasons": reasons,
    }


def parse_limit_warning(text: str) -> dict[str, Any] | None:
    match = _LIMIT_RE.search(text)
    if not match:
        return None
    return {
        "limit": match["limit"],
        "value": int(match["value"]),
        "function": match["fn"],
        "file": match["file"],
        "line": int(match["line"]) if match["line"] else None,
        "reason": match["reason"],
    }


def strip_compile_id(reason: str) -> str:
    return re.sub(r"^\d+/\d+: ", "", reason)


def parse_loop_skip(text: str) -> dict[str, Any] | None:
    """2.1-2.5 INFO: "Skipping frame because there is a graph break in a for/while loop"."""
    match = _LOOP_SKIP_RE.search(text)
    if not match:
        return None
    return {"file": match["file"], "line": int(match["line"]), "function": match["fn"]}
