"""The package's folders are its architecture: who may import whom, checked on the source.

The measuring child runs under whatever interpreter holds the torch being measured (another
venv, another image): it may import the standard library, torch, and nothing of the parent
side. The gate and the reports never import the child.

Above the run: the gate judges what it is given (no github, report or cli); the report
renders without github or the cli (github, which posts it, takes the report's types); config,
which every wing reads, reads no other wing. No circle of imports anywhere in the package.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from repo_helpers import RUNNER, TESTS

PACKAGE = RUNNER / "compilegate"
WINGS = ("cli", "config", "run", "child", "results", "gate", "report", "github", "containers")
PARENT_ONLY_LIBRARIES = ("yaml", "jsonschema", "referencing", "requests", "docker")
# stdlib-only modules at the top
CHILD_MAY_IMPORT = ("compilegate", "compilegate.paths", "compilegate.break_type")
# numpy: seeded when the measuring interpreter has it (user code may draw from it), optional.
STDLIB_AND_TORCH = set(sys.stdlib_module_names) | {"torch", "numpy", "__future__"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Absolute names of everything `path` imports (relative imports resolved)."""
    package = (
        module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    )
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            found.add(prefix)
            found.update(f"{prefix}.{alias.name}" for alias in node.names)
    return found


def modules(wing: str) -> list[Path]:
    return sorted((PACKAGE / wing).rglob("*.py"))


def wing_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "compilegate" else None


def test_the_top_level_holds_only_the_wings_and_shared_stdlib_modules():
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    # checkout_files: reading the checkout's files on the host, shared by config, run and
    # containers (standard library and errors only, like paths); cleanup: removing a folder a
    # child wrote into, whatever modes it left, shared by run and containers (stdlib only);
    # bounded_json: reading a JSON document that crossed a trust boundary within limits,
    # shared by gate, run, containers and github (stdlib only); break_type: a graph-break
    # reason's short kind, shared by child (a fallback's type) and report (a site's note).
    shared = [
        "__init__.py", "__main__.py", "bounded_json.py", "break_type.py", "checkout_files.py",
        "cleanup.py", "errors.py", "paths.py",
    ]  # fmt: skip
    assert loose == [*shared, "schemas.py"]
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert set(folders) <= set(WINGS), folders


@pytest.mark.parametrize("path", modules("child"), ids=lambda p: p.name)
def test_child_imports_only_stdlib_torch_and_itself(path: Path):
    for name in imports_of(path):
        top = name.split(".")[0]
        if top == "compilegate":
            inside_child = name.startswith("compilegate.child")
            allowed = any(name == m or name.startswith(m + ".") for m in CHILD_MAY_IMPORT[1:])
            assert inside_child or allowed or name in CHILD_MAY_IMPORT, f"{path.name}: {name}"
        else:
            assert top in STDLIB_AND_TORCH, f"{path.name} imports {name}"


# What the child's interpreter loads: the bootstrap runs the package's __init__, then the
# child's modules and what they import at the top (paths.py, break_type.py). That
# interpreter may be as old as Python 3.8 (run/launcher.py, `--python`): none of it may use
# later syntax, and every annotation (`str | None`, `dict[str, Any]`) must stay a string,
# unevaluated.
CHILD_LOADS = [
    PACKAGE / "__init__.py",
    PACKAGE / "paths.py",
    PACKAGE / "break_type.py",
    *modules("child"),
]


@pytest.mark.parametrize("path", CHILD_LOADS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_what_the_child_loads_is_python_3_8(path: Path):
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, feature_version=(3, 8))  # SyntaxError: syntax newer than 3.8
    annotated = any(
        (isinstance(node, (ast.AnnAssign, ast.arg)) and node.annotation is not None)
        or (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None)
        for node in ast.walk(tree)
    )
    if annotated:
        assert "from __future__ import annotations" in source, f"{path.name}: annotations run"


@pytest.mark.parametrize("wing", ["gate", "report", "results", "config"])
def test_parent_wings_never_import_the_child(wing: str):
    for path in modules(wing):
        for name in imports_of(path):
            assert wing_of(name) != "child", f"{wing}/{path.name} imports {name}"


@pytest.mark.parametrize("path", modules("gate"), ids=lambda p: p.name)
def test_the_gate_is_a_judge_that_neither_fetches_nor_renders(path: Path):
    """The gate judges documents it is given: fetching one (github/baseline_fetch.py), saying
    what it decided (report/) and exit codes (cli/) sit above it."""
    for name in imports_of(path):
        assert wing_of(name) not in ("github", "cli", "report"), f"gate/{path.name}: {name}"


@pytest.mark.parametrize("path", modules("report"), ids=lambda p: p.name)
def test_the_report_renders_without_github_or_the_cli(path: Path):
    """Renderings are text and types: posting them is github/'s, which takes the report's
    types (report/workflow_annotation.py) from report/, never the other way round."""
    for name in imports_of(path):
        assert wing_of(name) not in ("github", "cli"), f"report/{path.name}: {name}"


def test_config_imports_no_other_wing():
    """config is the ground of the parent side: every wing may read a Config, so config reads
    none of them (the names a step may opt in are config's own, config/env_names.py)."""
    for path in modules("config"):
        for name in imports_of(path):
            wing = wing_of(name)
            assert wing not in WINGS or wing == "config", f"config/{path.name} imports {name}"


# What run/ still takes from report/: the words of the failures it prints as it goes (its
# progress lines) and of the probe's usage error (report/child_failure_words.py); a result
# records every failure as facts (`failure`), its `error` only text that is not compilegate's
# (issue 53).
RUN_BORROWS = ("compilegate.report.child_failure_words",)


@pytest.mark.parametrize("wing", ["run", "results"])
def test_the_run_and_results_import_no_words_of_the_report(wing: str):
    """The run measures and records facts: it reads no verdict and renders nothing. What a
    result records of an unsteady machine or of the decision is facts (run_health.unsteady's
    causes, the recommendation's codes), worded by report/ alone (issue 53, items 3 and 4);
    so is a failure (its `failure`); run/ borrows only the words it prints (RUN_BORROWS); the gate,
    github and cli the run never imports."""
    for path in modules(wing):
        for name in imports_of(path):
            if wing_of(name) == "report":
                assert wing == "run" and name.startswith(RUN_BORROWS), f"{wing}/{path.name}: {name}"
            if wing == "run":
                assert wing_of(name) not in ("gate", "github", "cli"), f"run/{path.name}: {name}"


@pytest.mark.parametrize("wing", ["run", "containers", "cli", "github"])
def test_the_parent_uses_only_the_childs_protocol(wing: str):
    """The launchers (run/, containers/) speak to the child through child/protocol.py alone:
    ChildSpec out, ChildReport back."""
    for path in modules(wing):
        for name in imports_of(path):
            if wing_of(name) == "child":
                assert name.startswith("compilegate.child.protocol"), f"{path.name}: {name}"


def test_the_judge_to_report_pipeline_lives_outside_the_cli():
    """Issue 53: the comparison of a result with its baseline and the rendering of its verdicts
    are report/judge_and_render.py's; cli/ parses arguments and calls it, so no command takes
    the pipeline from another command's module (`run` once imported it from gate_commands)."""
    for path in modules("cli"):
        if path.name != "__init__.py":  # the parser registers every command
            taken = {n for n in imports_of(path) if n.startswith("compilegate.cli.gate_commands")}
            assert not taken, path.name
    pipeline = "compilegate.report.judge_and_render"
    for command in ("gate_commands.py", "run_command.py"):
        assert pipeline in imports_of(PACKAGE / "cli" / command), command


# What says a row or a variant in words: the comment's details and the terminal's report lay
# out what report/version_said.py said of each version, once for both, and call none of it.
ROW_WORDERS = (
    "compilegate.report.row_words",
    "compilegate.report.row_cells.row_cells",
    "compilegate.report.row_cells.said_cells",
    "compilegate.report.speeds",
    "compilegate.report.note_words",
    "compilegate.report.decision_words",
    "compilegate.report.step_bound_words",
    "compilegate.report.lever_words",
    "compilegate.report.distributed_words",
)


@pytest.mark.parametrize("layout", ["details.py", "run_set_text.py"])
def test_the_layouts_of_a_version_word_no_row(layout: str):
    """Issue 53, item 7: a version's variants and gate rows are said once
    (report/version_said.py); its layouts take those words and never call back into the
    modules that word a row (row_words/, row_cells, the sentence modules), so the data
    flows one way: judge, say, lay out."""
    found = imports_of(PACKAGE / "report" / layout)
    assert not sorted(n for n in found if n.startswith(ROW_WORDERS)), layout


def test_no_modules_import_each_other():
    """Data flows one way inside a wing too: no circle of imports, not even through an import
    inside a function (config/model.py once reached back into config/loading.py that way)."""
    found = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {m: {n for n in imports_of(p) if n in found and n != m} for m, p in found.items()}

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for name in graph[todo.pop()] - seen:
                seen.add(name)
                todo.append(name)
        return seen

    circles = sorted(m for m in graph if m in reach(m))
    assert circles == []


def test_test_modules_have_unique_names() -> None:
    """pytest imports test modules by basename (rootdir mode, no __init__.py in tests/): two
    files of one name in different folders stop the whole collection."""
    tests = TESTS
    seen: dict[str, Path] = {}
    clashes = []
    for path in sorted(tests.rglob("test_*.py")):
        if path.name in seen:
            clashes.append(f"{seen[path.name].relative_to(tests)} and {path.relative_to(tests)}")
        seen.setdefault(path.name, path)
    assert clashes == []
