"""Numbers for people, in one place: the gate writes them into its rows' messages, report/
into its tables. A row value with its unit (`1.27x`, `12.50 ms`, `1.2 GiB`) and a byte
count in binary units."""

from __future__ import annotations

from typing import Optional, Union

# A row's value: a number, a word (a status), or nothing measured.
Value = Optional[Union[float, int, str]]


def format_value(value: Value, unit: str | None) -> str:
    """A row value for people: `1.27x`, `12.50 ms`, `14.3 s`, `1.2 GiB`, `3`, `pass`, `-`."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "yardsticks":
        return f"{value:.3g} yardsticks"
    if unit == "ms":
        return f"{value:.3g} ms" if value < 1 else f"{value:.2f} ms"
    if unit == "s":
        return f"{value:.1f} s"
    if unit == "bytes":
        return format_bytes(value)
    if unit == "count":
        return f"{value:.0f}"
    return f"{value:g}"


def format_bytes(value: float) -> str:
    size = float(value)
    for suffix in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or suffix == "GiB":
            return f"{size:.0f} {suffix}" if suffix == "B" else f"{size:.1f} {suffix}"
        size /= 1024
    raise AssertionError("unreachable")
