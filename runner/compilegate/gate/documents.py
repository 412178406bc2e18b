"""Read result and baseline documents, strictly, from files.

A baseline is a result document accepted from the default branch
(schemas/baseline.schema.json references the result schema). Reading either kind is
strict: a missing file, a file over a limit of bounded_json.py (size, nesting, values:
checked before it is parsed, since a document may come from the code under test), invalid
JSON, a number JSON does not have (`NaN`, `Infinity`, which Python's json would accept, or
an overflow such as `1e999`) or a schema violation is a BaselineError (exit 2) whose
one-line message names the file and the limit, the line/column or the key path. The
checks themselves are the door of results/model.py; `check_result_document` applies them
to a document in memory (`compilegate run --baseline` compares the result it just
measured).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..bounded_json import DocumentRefused, read_bounded_json
from ..errors import BaselineError
from ..results.model import KEYS_OLD_BASELINES_LACK, ROLES, ResultDocument, check, parse

__all__ = [
    "KEYS_OLD_BASELINES_LACK",
    "check_result_document",
    "read_document",
    "read_result_document",
]


def read_result_document(path: Path | str, *, role: str = "result") -> dict[str, Any]:
    """Load a result (or, with role="baseline", a baseline) document and validate it, kept
    as JSON: for github/baseline_fetch.py, which writes what it fetched back as it was."""
    document: dict[str, Any] = _load(Path(path), role)  # an object: the schema says so
    check_result_document(document, str(path), role=role)
    return document


def read_document(path: Path | str, *, role: str = "result") -> ResultDocument:
    """The document at `path`, read strictly and typed (results/model.py's door)."""
    return parse(_load(Path(path), role), str(path), role)


def _load(path: Path, role: str) -> Any:
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    try:
        return read_bounded_json(path)  # NaN, Infinity, 1e999 parse as floats: the door refuses
    except FileNotFoundError:
        raise BaselineError(f"{path}: {role} file not found") from None
    except IsADirectoryError:
        raise BaselineError(f"{path}: expected a {role} JSON file, found a directory") from None
    except UnicodeDecodeError:
        raise BaselineError(f"{path}: {role} file is not UTF-8 text") from None
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read {role} file: {exc.strerror or exc}") from None
    except DocumentRefused as exc:
        raise BaselineError(f"{path}: {role} file refused: {exc}") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(
            f"{path}: {role} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None


def check_result_document(document: Any, source: str, *, role: str = "result") -> None:
    """Raise a one-line BaselineError naming `source` and the key path of the first problem:
    a non-finite number, a schema violation, a duplicate step or variant name."""
    check(document, source, role)
