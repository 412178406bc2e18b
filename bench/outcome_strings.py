"""Count the places that steer on a child's outcome or phase by its words (issue 53, items
1-2): `phase_of` on a progress message, `" while "` appended to an error outside report/ (which
owns the words) or read back from one anywhere (`in`, `split`), and
`startswith`/`endswith` on an error, phase or progress message (or with an outcome's words,
"timed out", WALL_CAP_PASSED, LONG_PHASES, as the prefix).

    python bench/outcome_strings.py [PACKAGE_DIR]   (default: runner/compilegate)

Prints each site (file:line: the source) and the count per kind; an AST walk, so docstrings
and comments do not count.
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
RECEIVER = re.compile(r"error|phase|message|line\b|said|cause", re.I)
OUTCOME_WORDS = re.compile(r"timed out|WALL_CAP|PHASES|LONG_PHASES|crashed|exited", re.I)


def sites(package: Path) -> list[tuple[str, str, str]]:
    """(kind, file:line, source) of every site that reads an outcome or phase from words."""
    found: list[tuple[str, str, str]] = []
    for path in sorted(package.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        where = f"{path.relative_to(package.parent)}"
        in_report = path.relative_to(package).parts[0] == "report"  # report/ owns the words
        in_phase_of = {  # a phase read from a message's prefix
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef) and node.name == "phase_of"
            for inner in ast.walk(node)
        }
        for node in ast.walk(tree):
            kind = None
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else None
                if name == "phase_of" or (
                    isinstance(func, ast.Attribute) and func.attr == "phase_of"
                ):
                    kind = "phase_of"
                elif isinstance(func, ast.Attribute) and func.attr in ("startswith", "endswith"):
                    receiver = ast.unparse(func.value)
                    argument = " ".join(ast.unparse(arg) for arg in node.args)
                    if RECEIVER.search(receiver) and (
                        OUTCOME_WORDS.search(argument) or re.search(r"phase", receiver, re.I)
                    ):
                        kind = "startswith"
                    elif OUTCOME_WORDS.search(argument) or id(node) in in_phase_of:
                        kind = "startswith"
            if _reads_while(node) or (_appends_while(node, docstrings) and not in_report):
                kind = '" while "'
            if kind is not None:
                line = source.splitlines()[node.lineno - 1].strip()
                found.append((kind, f"{where}:{node.lineno}", line))
    return found


def _while(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == " while "


def _reads_while(node: ast.AST) -> bool:
    """`" while " in text`, `text.split(" while ")` and the like: the words read back."""
    if isinstance(node, ast.Compare):
        return _while(node.left) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        splits = ("split", "rsplit", "partition", "rpartition", "index", "find", "rfind")
        return node.func.attr in splits and any(_while(arg) for arg in node.args)
    return False


def _appends_while(node: ast.AST, docstrings: set[int]) -> bool:
    """An f-string starting with " while ": the phase appended to an error (outside report/,
    where words are composed, that is the protocol the issue names)."""
    if not isinstance(node, ast.JoinedStr) or not node.values:
        return False
    first = node.values[0]
    return (
        isinstance(first, ast.Constant)
        and isinstance(first.value, str)
        and first.value.startswith(" while ")
        and id(node) not in docstrings
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "package", nargs="?", type=Path, default=REPO_ROOT / "runner" / "compilegate",
        help="the package folder to count in (default: this checkout's runner/compilegate)",
    )  # fmt: skip
    package = parser.parse_args().package
    found = sites(package)
    for kind, where, line in found:
        print(f"{kind:10} {where}: {line}")
    counts: dict[str, int] = {}
    for kind, _, _ in found:
        counts[kind] = counts.get(kind, 0) + 1
    summary = ", ".join(
        f"{kind} {counts.get(kind, 0)}" for kind in ("startswith", '" while "', "phase_of")
    )
    print(f"total {len(found)}: {summary}")


if __name__ == "__main__":
    main()
