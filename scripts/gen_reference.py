"""Write the generated reference pages: docs/reference/config.md from the config schema, and
docs/reference/cli.md from compilegate's own argparse parser.

    python scripts/gen_reference.py           # rewrite both pages
    python scripts/gen_reference.py --check   # exit 1, naming the page, when one is stale

The pages are committed; tests/contract/test_docs.py regenerates them in memory and
fails when they differ, so a new key or flag cannot land without its reference line.
Defaults the schema does not state come from the config model (config/model.py), the same
values the loader fills in.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runner"))

from compilegate.cli import build_parser  # noqa: E402
from compilegate.config import (  # noqa: E402
    DEFAULT_NUMERICS,
    DEFAULT_STEP_SETTINGS,
    DEFAULT_THRESHOLDS,
)
from compilegate.config.model import Variant  # noqa: E402

SCHEMA = ROOT / "schemas" / "config.schema.json"
CONFIG_PAGE = ROOT / "docs" / "reference" / "config.md"
CLI_PAGE = ROOT / "docs" / "reference" / "cli.md"
# argparse wraps to the terminal's width; the page is the same on every terminal.
HELP_WIDTH = 100

_VARIANT_FIELDS = {f.name: f.default for f in dataclasses.fields(Variant)}
# The values the loader fills in where a key is absent, per schema definition.
MODEL_DEFAULTS: dict[str, dict[str, Any]] = {
    "stepSettings": DEFAULT_STEP_SETTINGS,
    "numerics": DEFAULT_NUMERICS,
    "thresholds": DEFAULT_THRESHOLDS,
    "variant": {
        "mode": _VARIANT_FIELDS["mode"],
        "dynamic": _VARIANT_FIELDS["dynamic"],
        "compile": _VARIANT_FIELDS["compile_target"],
        "fullgraph": _VARIANT_FIELDS["fullgraph"],
        "backend": _VARIANT_FIELDS["backend"],
    },
}
# Sections of the page, one per schema definition, in reading order.
SECTIONS = (
    (
        "step",
        "Step (`steps[]`)",
        "Each entry of `steps`. Besides `name` and `entry`, a step may set every "
        "[step setting](#step-settings-defaults-or-steps) itself; what it does not set comes from "
        "`defaults`, then from the built-in default.",
    ),
    (
        "stepSettings",
        "Step settings (`defaults` or `steps[]`)",
        "Set once under `defaults` for every step, or in a step for that step alone.",
    ),
    ("variant", "Variant (`variants[]`)", "One compiled configuration measured against eager."),
    (
        "numerics",
        "Numerics (`numerics`)",
        "The compiled step against a float64 reference and eager.",
    ),
    (
        "thresholds",
        "Thresholds (`thresholds`)",
        "Global (top level) or per step. The gate applies "
        "the thresholds the baseline recorded, never a pull request's own.",
    ),
)
SECTION_ANCHORS = {
    "step": "#step-steps",
    "stepSettings": "#step-settings-defaults-or-steps",
    "variant": "#variant-variants",
    "numerics": "#numerics-numerics",
    "thresholds": "#thresholds-thresholds",
}


def _cell(text: str) -> str:
    """A description made safe for one cell of a GitHub table: Markdown's characters are
    escaped outside `code spans`; inside them only the table's `|` (GFM reads it even there)."""
    parts = text.replace("\n", " ").split("`")
    for i, part in enumerate(parts):
        specials = ("|",) if i % 2 else ("\\", "|", "*", "_", "<", ">", "[")
        for char in specials:
            part = part.replace(char, "\\" + char)
        parts[i] = part
    return "`".join(parts)


def _literal(value: Any) -> str:
    return "`" + json.dumps(value) + "`"


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """(the definition's name when the node is a reference to one, the node it stands for)."""
    ref = node.get("$ref")
    if not ref:
        return None, node
    parts = ref.removeprefix("#/").split("/")
    target: Any = schema
    for part in parts:
        target = target[part]
    # A reference into a definition's properties (`#/$defs/stepSettings/properties/x`) is that
    # property: documented in that definition's section.
    name = parts[1] if len(parts) == 2 else None
    merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return name, merged


def _type(schema: dict[str, Any], node: dict[str, Any]) -> str:
    name, node = _resolve(schema, node)
    if name:
        return f"[{name}]({SECTION_ANCHORS[name]})"
    if "const" in node:
        return _literal(node["const"])
    if "enum" in node:
        return " \\| ".join(_literal(v) for v in node["enum"])
    kinds = node.get("type", "any")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    text = " or ".join(kinds)
    if "array" in kinds and "items" in node:
        text = f"array of {_type(schema, node['items'])}"
    bounds = []
    if "minimum" in node:
        bounds.append(f"≥ {node['minimum']}")
    if "exclusiveMinimum" in node:
        bounds.append(f"> {node['exclusiveMinimum']}")
    if "maximum" in node:
        bounds.append(f"≤ {node['maximum']}")
    if "minItems" in node:
        bounds.append(f"at least {node['minItems']}")
    if "maxItems" in node:
        bounds.append(f"at most {node['maxItems']}")
    if node.get("uniqueItems"):
        bounds.append("unique")
    if "maxLength" in node:
        bounds.append(f"at most {node['maxLength']} characters")
    if "pattern" in node:
        bounds.append("matching `" + node["pattern"].replace("|", "\\|") + "`")
    return text + (" (" + ", ".join(bounds) + ")" if bounds else "")


def _is_step_setting(prop: dict[str, Any]) -> bool:
    return prop.get("$ref", "").startswith("#/$defs/stepSettings/properties/")


def _rows(
    schema: dict[str, Any], definition: str | None, node: dict[str, Any], prefix: str = ""
) -> list[str]:
    required = set(node.get("required", ()))
    defaults = MODEL_DEFAULTS.get(definition or "", {})
    rows = []
    for key, prop in node.get("properties", {}).items():
        if _is_step_setting(prop):
            continue  # documented once, under step settings
        name, resolved = _resolve(schema, prop)
        if key in required:
            default = "required"
        elif "default" in resolved:
            default = _literal(resolved["default"])
        elif not prefix and key in defaults:
            default = _literal(defaults[key])
        else:
            default = "–"
        description = _cell(resolved.get("description", ""))
        rows.append(f"| `{prefix}{key}` | {_type(schema, prop)} | {default} | {description} |")
        # An object defined inline (limits, epoch) is documented key by key beneath it.
        if name is None and "properties" in resolved:
            rows += _rows(schema, None, resolved, prefix=f"{prefix}{key}.")
    return rows


def _table(rows: list[str]) -> list[str]:
    return ["| key | type | default | description |", "|---|---|---|---|", *rows]


def config_reference() -> str:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    lines = [
        "# `compilegate.yml` reference",
        "",
        "<!-- Generated by scripts/gen_reference.py from schemas/config.schema.json: "
        "do not edit. -->",
        "",
        _cell(schema.get("description", "")),
        "",
        "Every key the schema (`schemas/config.schema.json`) allows, with its type, its default "
        "(the schema's, else the value the loader fills in) and its description. Unknown keys "
        "are errors. The same file explained by example: [Configuration](../configuration.md).",
        "",
        "## Top level",
        "",
        *_table(_rows(schema, None, schema)),
    ]
    step_keys = schema["$defs"]["step"]["properties"]
    settings = {k for k, v in step_keys.items() if _is_step_setting(v)}
    # A step may set every step setting, and the page says so: a setting only `defaults` allows
    # would need its own line.
    assert settings == set(schema["$defs"]["stepSettings"]["properties"]), "step ≠ step settings"
    for definition, title, intro in SECTIONS:
        lines += ["", f"## {title}", "", intro, ""]
        lines += _table(_rows(schema, definition, schema["$defs"][definition]))
    return "\n".join(lines) + "\n"


def _fixed_width(parser: argparse.ArgumentParser) -> None:
    formatter = parser.formatter_class
    parser.formatter_class = lambda prog: formatter(prog, width=HELP_WIDTH)  # type: ignore[assignment]


def _commands(
    parser: argparse.ArgumentParser, name: str, summary: str = ""
) -> list[tuple[str, str, argparse.ArgumentParser]]:
    found = [(name, summary, parser)]
    for action in parser._actions:  # argparse keeps its subcommands only here
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for sub_name, sub in action.choices.items():
                found += _commands(sub, f"{name} {sub_name}", helps.get(sub_name, ""))
    return found


def cli_reference() -> str:
    lines = [
        "# Command-line reference",
        "",
        "<!-- Generated by scripts/gen_reference.py from compilegate's argparse parser: "
        "do not edit. -->",
        "",
        "Each command's `--help`, as `compilegate` prints it (Python "
        f"{sys.version_info.major}.{sys.version_info.minor}, {HELP_WIDTH} columns). "
        "What the commands are for, in one table: [Command line](../command-line.md); "
        "exit codes: [the gate](../gate.md#exit-codes).",
    ]
    for name, summary, parser in _commands(build_parser(), "compilegate"):
        _fixed_width(parser)
        lines += ["", f"## `{name}`", ""]
        if summary:
            lines += [_cell(summary[0].upper() + summary[1:]) + ".", ""]
        lines += ["```text", parser.format_help().rstrip(), "```"]
    return "\n".join(lines) + "\n"


def python_of(cli_page: str) -> tuple[int, int] | None:
    """The Python version a CLI page says it was made with: argparse lays help out differently
    from one version to another (3.13 shortened usage lines), so only that one reproduces it."""
    found = re.search(r"\(Python (\d+)\.(\d+),", cli_page)
    return (int(found.group(1)), int(found.group(2))) if found else None


def pages() -> dict[Path, str]:
    return {CONFIG_PAGE: config_reference(), CLI_PAGE: cli_reference()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when a page is stale")
    args = parser.parse_args(argv)
    stale = []
    for path, text in pages().items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        made_with = python_of(current) if path == CLI_PAGE and current else None
        if args.check and made_with and made_with != sys.version_info[:2]:
            print(
                f"{path.relative_to(ROOT)}: not checked, made with Python "
                f"{made_with[0]}.{made_with[1]} and this is "
                f"{sys.version_info.major}.{sys.version_info.minor} (argparse's layout differs)",
                file=sys.stderr,
            )
            continue
        if args.check:
            stale.append(path.relative_to(ROOT))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    for path in stale:
        print(f"{path} is stale: run python scripts/gen_reference.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
