"""Read result and baseline documents, strictly.

A baseline is a result document accepted from the default branch
(schemas/baseline.schema.json references the result schema). Reading either kind is
strict: a missing file, invalid JSON, a number JSON does not have (`NaN`, `Infinity`,
which Python's json would accept, or an overflow such as `1e999`) or a schema violation
is a BaselineError (exit 2) whose one-line message names the file and the line/column or
the key path. `check_result_document` applies the same checks to a document in memory
(`compilegate run --baseline` compares the result it just measured).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import BaselineError
from ..results.document import non_finite_paths
from ..schemas import validation_errors

ROLES = ("result", "baseline")
# Keys a baseline recorded by an earlier compilegate lacks (compile cost and torch state
# came later): read as a baseline, such a document is still judged against, and the gate
# says those measurements are new (gate/judges/compile_cost.py) instead of refusing it.
# A result — this run's — must carry them.
KEYS_OLD_BASELINES_LACK = ("compile_cost", "torch_state")
MAX_DETAIL_CHARS = 200


def read_result_document(path: Path | str, *, role: str = "result") -> dict[str, Any]:
    """Load a result (or, with role="baseline", a baseline) document and validate it."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BaselineError(f"{path}: {role} file not found") from None
    except IsADirectoryError:
        raise BaselineError(f"{path}: expected a {role} JSON file, found a directory") from None
    except UnicodeDecodeError:
        raise BaselineError(f"{path}: {role} file is not UTF-8 text") from None
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read {role} file: {exc.strerror or exc}") from None
    try:
        document = json.loads(text)  # NaN, Infinity, 1e999 parse as floats: caught below
    except json.JSONDecodeError as exc:
        raise BaselineError(
            f"{path}: {role} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    check_result_document(document, str(path), role=role)
    return document


def check_result_document(document: Any, source: str, *, role: str = "result") -> None:
    """Raise a one-line BaselineError naming `source` and the key path of the first problem:
    a non-finite number, a schema violation, a duplicate step or variant name."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    non_finite = non_finite_paths(document)
    if non_finite:
        where, value = non_finite[0]
        more = f" (and {len(non_finite) - 1} more)" if len(non_finite) > 1 else ""
        raise BaselineError(
            f"{source}: not a valid compilegate {role} document: at {where}: {value} is not a "
            f"finite number (JSON has no NaN or Infinity){more}"
        )
    may_lack = KEYS_OLD_BASELINES_LACK if role == "baseline" else ()
    problems = validation_errors(document, role, may_lack=may_lack) + _duplicate_names(document)
    if problems:
        where, _, message = problems[0].partition(": ")
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise BaselineError(
            f"{source}: not a valid compilegate {role} document: at {where}: "
            f"{_one_line(message)}{more}"
        )


def _duplicate_names(document: Any) -> list[str]:
    """Step names and variant ids must be unique: they are what a comparison matches on."""
    if not isinstance(document, dict) or not isinstance(document.get("steps"), list):
        return []
    problems = []
    seen_steps: set[str] = set()
    for index, step in enumerate(document["steps"]):
        name = step.get("name") if isinstance(step, dict) else None
        if name in seen_steps:
            problems.append(f"steps[{index}].name: duplicate step name {name!r}")
        seen_steps.add(name)
        seen_variants: set[str] = set()
        variants = step.get("variants", []) if isinstance(step, dict) else []
        for v_index, variant in enumerate(variants if isinstance(variants, list) else []):
            vid = variant.get("id") if isinstance(variant, dict) else None
            if vid in seen_variants:
                problems.append(f"steps[{index}].variants[{v_index}].id: duplicate variant {vid!r}")
            seen_variants.add(vid)
    return problems


def _one_line(message: str) -> str:
    flat = " ".join(message.split())
    return flat if len(flat) <= MAX_DETAIL_CHARS else flat[: MAX_DETAIL_CHARS - 1] + "…"
