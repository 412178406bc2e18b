"""Output of measured code, relayed to a log GitHub Actions reads, cannot become a command.

The runner treats a line starting with `::` (`::add-mask::`, `::stop-commands::`,
`::set-output`, `::error`) and any `##[` (the older syntax, anywhere in the line) as a
workflow command; a carriage return or another control character could start a new line in
the reader's eyes. Every line compilegate relays from a child, a container or a venv run
passes through `neutralise`: control characters become visible escapes, a leading `::`
becomes `: :` and `##[` becomes `## [`. So does every line the CLI itself prints
(workflow_log.py). Only stdlib, so `child/`'s neighbours may use it.

Output is read in chunks and cut into lines of at most MAX_LINE_BYTES (`bounded_lines`), so
what the parent holds of a child's output is bounded whatever the child prints.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from typing import IO

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_LEADING_COMMAND = re.compile(r"^(\s*):(?=:)")


def neutralise(line: str) -> str:
    """The line as it may be printed to a workflow log: never a workflow command."""
    line = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", line)
    line = line.replace("##[", "## [")
    return _LEADING_COMMAND.sub(r"\1: ", line)


# A line longer than this is cut, with a marker: a child printing 200 MiB without a newline
# must not grow a buffer in the parent (issue 21: 60 s CPU, 619 MiB) — the parent keeps at
# most this much of a line, however long the child's line is.
MAX_LINE_BYTES = 8 * 1024
CHUNK_BYTES = 64 * 1024
CUT_MARKER = " … [line cut: {cut} bytes more]"


def bounded_lines(
    chunks: Iterable[bytes], *, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[str]:
    """The lines of a byte stream read in chunks, each at most `max_line_bytes` (then the cut
    marker): what the parent holds is bounded by one line and one chunk, never by the
    child's output. No trailing newline; a final line without one is yielded too."""
    kept = bytearray()
    cut = 0
    for chunk in chunks:
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start : len(chunk) if end < 0 else end]
            room = max_line_bytes - len(kept)
            if room > 0:
                kept += piece[:room]
            cut += max(0, len(piece) - max(room, 0))
            if end < 0:
                break
            yield _finish(kept, cut)
            kept, cut, start = bytearray(), 0, end + 1
    if kept or cut:
        yield _finish(kept, cut)


def read_chunks(stream: IO[bytes], *, chunk_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
    """A binary pipe's bytes as they come, in chunks of at most `chunk_bytes` (never a whole
    line: `for line in pipe` buffers a line of any length)."""
    fd = stream.fileno()
    while True:
        chunk = os.read(fd, chunk_bytes)
        if not chunk:
            return
        yield chunk


def _finish(kept: bytearray, cut: int) -> str:
    line = bytes(kept).decode("utf-8", "replace").rstrip("\r")
    return line + CUT_MARKER.format(cut=cut) if cut else line
