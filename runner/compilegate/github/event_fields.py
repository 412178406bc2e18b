"""Reading an event payload by key path, so a hand-written or truncated event is named by
the key it lacks (`pull_request.head.sha`), never by Python's `KeyError('sha')` (issue 54,
finding 8)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class MissingEventField(KeyError):
    """A key path the payload lacks, or holds something else at; `str()` says which."""

    def __init__(self, path: str, expected: str) -> None:
        super().__init__(path)
        self.path = path
        self.expected = expected

    def __str__(self) -> str:
        return f"`{self.path}` is missing or not {self.expected}"


def event_object(payload: Any, path: str) -> Mapping[str, Any]:
    """The JSON object at dotted `path` (`pull_request.head`)."""
    found = _walk(payload, path, "an object")
    if not isinstance(found, Mapping):
        raise MissingEventField(path, "an object")
    return found


def event_text(payload: Any, path: str) -> str:
    """The non-empty string at dotted `path` (`repository.full_name`)."""
    found = _walk(payload, path, "a string")
    if not isinstance(found, str) or not found:
        raise MissingEventField(path, "a string")
    return found


def event_number(payload: Any, path: str) -> int:
    """The positive integer at dotted `path` (`pull_request.number`)."""
    found = _walk(payload, path, "a positive number")
    if isinstance(found, bool) or not isinstance(found, int) or found < 1:
        raise MissingEventField(path, "a positive number")
    return found


def _walk(payload: Any, path: str, expected: str) -> Any:
    """What `path` names: keys joined by `.`, a list's item as `key[0]`."""
    here = payload
    for part in path.split("."):
        key, _, index = part.partition("[")
        if not isinstance(here, Mapping) or here.get(key) is None:
            raise MissingEventField(path, expected)
        here = here[key]
        if index:
            at = int(index.rstrip("]"))
            if not isinstance(here, Sequence) or isinstance(here, str) or len(here) <= at:
                raise MissingEventField(path, expected)
            here = here[at]
    return here
