"""Load and validate compilegate.yml into the config model.

Every error is a ConfigError whose one-line message names the file, the line and the key
path (`steps[0].variants[1].mode`) and says what was expected.

YAML anchors and aliases (`&name`, `*name`, `<<: *name`) are refused before anything is
built: a few hundred bytes of nested aliases expand into gigabytes (466 bytes took 1.1 GB
when validation walked and printed the expanded tree), on the host, before any container
or limit applies (issue 29). Without them a value is at most as large as the file
(CONFIG_MAX_BYTES), and a value an error shows is cut at MAX_SHOWN_CHARS.

Nesting deeper than CONFIG_MAX_DEPTH is refused in the same pass, before anything is
composed: PyYAML's scanner is quadratic in flow depth and its composer recursive (a 200 KB
config of `[` ran 12 minutes, then raised RecursionError, issue 38); the pass stops there.

The whole check of any file under CONFIG_MAX_BYTES takes under 5 CPU-s (issue 51;
bench/config_limits.py measures the worst shapes found): the text is composed once, with
libyaml's parser where PyYAML has it (its wheels do: a quarter of the pure-Python parser's
CPU, 2.5 s for 256 KiB of `{},`), and built from that node; the schema bounds every string
and list, its patterns are linear, a pattern or `uniqueItems` is not run on a value over
its bound (schemas.bounded_validator), and at most MAX_ERRORS schema errors are collected.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import itertools
import os
import reprlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from ..checkout_files import CONFIG_MAX_BYTES, read_checkout_file
from ..errors import ConfigError
from ..schemas import (
    MAX_ERRORS,
    bounded_validator,
    format_key_path,
    load_schema,
    require_jsonschema,
)
from .env_names import opt_in_refusal
from .limits import ResourceLimits
from .model import (
    DEFAULT_ACCEPT_LABEL,
    DEFAULT_NUMERICS,
    DEFAULT_STEP_SETTINGS,
    DEFAULT_THRESHOLDS,
    MIN_WARMUP_REDUCE_OVERHEAD,
    Config,
    DistributedSettings,
    NumericsSettings,
    StepConfig,
    Variant,
)

# The longest value (or message) an error shows: a config value may be up to CONFIG_MAX_BYTES.
MAX_SHOWN_CHARS = 120
# The deepest nesting of mappings and lists: a real config's is 5 (steps, a step, its
# variants, a variant, its options).
CONFIG_MAX_DEPTH = 16
# libyaml's parser when PyYAML was built with it, else PyYAML's own (same events and nodes,
# other wording of syntax errors; module docstring).
_PARSER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_config_file(path: Path, repo_root: Path | None = None) -> Config:
    """Read compilegate.yml (through checkout_files: no link, a regular file, at most
    CONFIG_MAX_BYTES); every problem is a one-line ConfigError."""
    path = Path(path)
    # The root defaults to the folder the config is named in, not a link's target's.
    root = Path(repo_root or Path(os.path.abspath(path)).parent).resolve()
    if not os.path.lexists(path):
        raise ConfigError(f"{path}: config file not found")
    data = read_checkout_file(path, root, max_bytes=CONFIG_MAX_BYTES, error=ConfigError)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read config: not UTF-8 ({exc.reason})") from None
    config = load_config_text(text, source=str(path), repo_root=root)
    return dataclasses.replace(config, path=path)


def load_config_text(text: str, *, source: str, repo_root: Path) -> Config:
    raw, node = _parse_yaml(text, source)
    _validate_schema(raw, node, source)
    defaults = raw.get("defaults", {})
    global_thresholds = {**DEFAULT_THRESHOLDS, **raw.get("thresholds", {})}
    steps = []
    seen: dict[str, int] = {}
    for index, step_raw in enumerate(raw["steps"]):
        name = step_raw["name"]
        if name in seen:
            line = _line_of(node, ["steps", index, "name"])
            raise ConfigError(
                f"{source}:{line}: steps[{index}].name: duplicate step name {_shown(name)} "
                f"(also steps[{seen[name]}])"
            )
        seen[name] = index
        steps.append(_build_step(step_raw, defaults, global_thresholds, index, node, source))
    sha = hashlib.sha256(text.encode()).hexdigest()
    return Config(
        path=Path(source),
        repo_root=repo_root,
        steps=tuple(steps),
        baseline=raw.get("baseline"),
        torch_versions=tuple(raw.get("torch", ())),
        sha256=sha,
        accept_label=raw.get("accept_label", DEFAULT_ACCEPT_LABEL),
        declared_steps=tuple(step.name for step in steps),
    )


def _build_step(
    step_raw: dict[str, Any],
    defaults: dict[str, Any],
    global_thresholds: dict[str, float],
    index: int,
    node: yaml.Node,
    source: str,
) -> StepConfig:
    merged = {**DEFAULT_STEP_SETTINGS, **defaults, **step_raw}
    variants = tuple(Variant.from_dict(v) for v in merged["variants"])
    ids = [v.id for v in variants]
    for vi, vid in enumerate(ids):
        if ids.index(vid) != vi:
            line = _line_of(node, ["steps", index, "variants", vi])
            raise ConfigError(
                f"{source}:{line}: steps[{index}].variants[{vi}]: duplicate variant {_shown(vid)}; "
                "give one of them a distinct 'name'"
            )
    needs_long_warmup = any(v.mode == "reduce-overhead" for v in variants)
    if needs_long_warmup and merged["warmup"] < MIN_WARMUP_REDUCE_OVERHEAD:
        key = "warmup" if "warmup" in step_raw else "variants"
        line = _line_of(node, ["steps", index, key])
        raise ConfigError(
            f"{source}:{line}: steps[{index}].warmup: reduce-overhead needs warmup >= "
            f"{MIN_WARMUP_REDUCE_OVERHEAD} (CUDA graphs are recorded on the 2nd call), "
            f"got {merged['warmup']}"
        )
    if merged["rounds"] > merged["iterations"]:
        line = _line_of(node, ["steps", index])
        raise ConfigError(
            f"{source}:{line}: steps[{index}].rounds: {merged['rounds']} rounds need at least "
            f"as many iterations, got iterations: {merged['iterations']}"
        )
    if merged["cold_compiles"] > merged["variant_processes"]:
        line = _line_of(node, ["steps", index])
        raise ConfigError(
            f"{source}:{line}: steps[{index}].cold_compiles: {merged['cold_compiles']} cold "
            f"compiles need as many variant_processes, got {merged['variant_processes']}"
        )
    if merged["cache_artifacts"] and merged["cold_compiles"] >= merged["variant_processes"]:
        line = _line_of(node, ["steps", index])
        raise ConfigError(
            f"{source}:{line}: steps[{index}].cache_artifacts: the process that starts from "
            f"the artifacts comes after the {merged['cold_compiles']} cold one(s): "
            f"variant_processes must be at least {merged['cold_compiles'] + 1}, got "
            f"{merged['variant_processes']}"
        )
    distributed = merged["distributed"]
    if distributed is not None:
        _check_distributed(distributed, merged, index, node, source)
    env_path: list[Any] = ["steps", index, "env"] if "env" in step_raw else ["defaults", "env"]
    for ni, name in enumerate(merged["env"]):
        refusal = opt_in_refusal(name)
        if refusal is not None:
            path = [*env_path, ni]
            line = _line_of(node, path)
            raise ConfigError(f"{source}:{line}: {format_key_path(path)}: {refusal}")
    numerics = NumericsSettings(
        **{**DEFAULT_NUMERICS, **defaults.get("numerics", {}), **step_raw.get("numerics", {})}
    )
    thresholds = {
        **global_thresholds,
        **defaults.get("thresholds", {}),
        **step_raw.get("thresholds", {}),
    }
    return StepConfig(
        name=merged["name"],
        entry=merged["entry"],
        device=merged["device"],
        variants=variants,
        warmup=merged["warmup"],
        iterations=merged["iterations"],
        rounds=merged["rounds"],
        timeout_s=float(merged["timeout_s"]),
        seed=merged["seed"],
        amp=merged["amp"],
        threads=merged["threads"],
        eager_processes=merged["eager_processes"],
        variant_processes=merged["variant_processes"],
        cold_compiles=merged["cold_compiles"],
        cache_artifacts=merged["cache_artifacts"],
        regional=merged["regional"],
        numerics=numerics,
        thresholds=thresholds,
        env=tuple(merged["env"]),
        gate_compile_wall_time=merged["gate_compile_wall_time"],
        steps_per_run=merged["steps_per_run"],
        epoch_length=(merged["epoch"] or {}).get("length"),
        limits=ResourceLimits.from_dict(
            {**defaults.get("limits", {}), **step_raw.get("limits", {})}
        ),
        distributed=None if distributed is None else DistributedSettings.from_dict(distributed),
    )


def _check_distributed(
    raw: dict[str, Any], merged: dict[str, Any], index: int, node: yaml.Node, source: str
) -> None:
    """What the schema cannot say of a step's `distributed`: one line naming the key."""
    where = ["steps", index, "distributed"]
    problem, key = None, None
    if raw.get("bucket_cap_mb") is not None and raw["wrapper"] != "ddp":
        problem, key = "bucket_cap_mb is DDP's: it needs wrapper: ddp", "bucket_cap_mb"
    elif merged["regional"]:
        problem, key = "regional compilation is not measured for a distributed step", None
    elif merged["cache_artifacts"]:
        problem, key = "cache_artifacts is not measured for a distributed step", None
    if problem is None:
        return
    path = [*where, key] if key is not None and key in raw else where
    line = _line_of(node, path)
    raise ConfigError(f"{source}:{line}: {format_key_path(path)}: {problem}")


class _UniqueKeyConstructor(yaml.constructor.SafeConstructor):
    """A SafeConstructor that refuses duplicate mapping keys (YAML silently keeps the last
    one); it builds from a composed node, parsing nothing itself."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                hash(key)
            except TypeError:  # `? [a, b]: 1`: a list or mapping as a key
                kind = "mapping" if isinstance(key, dict) else type(key).__name__
                raise yaml.constructor.ConstructorError(
                    None, None, f"a key must be a plain value, found a {kind}", key_node.start_mark
                ) from None
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {_shown(key)}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _parse_yaml(text: str, source: str) -> tuple[dict[Any, Any], yaml.Node]:
    try:
        _refuse_anchors_and_depth(text, source)
        node = yaml.compose(text, Loader=_PARSER)
        raw = _UniqueKeyConstructor().construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}" if mark else source
        problem = exc.problem or str(exc)
        raise ConfigError(f"{where}: malformed YAML: {_shortened(problem)}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: malformed YAML: {_shortened(str(exc))}") from None
    if not isinstance(raw, dict) or node is None:  # a mapping was composed from a node
        raise ConfigError(f"{source}:1: expected a mapping with 'version' and 'steps' at the top")
    return raw, node


def _refuse_anchors_and_depth(text: str, source: str) -> None:
    """A ConfigError at the first anchor or alias, or at nesting deeper than
    CONFIG_MAX_DEPTH (module docstring): found in the event stream, so nothing is composed,
    let alone expanded, and the scan stops there."""
    depth = 0
    for event in yaml.parse(text, Loader=_PARSER):
        line = event.start_mark.line + 1 if event.start_mark is not None else 1
        anchor = getattr(event, "anchor", None)  # aliases, scalars and collections have one
        if isinstance(event, yaml.AliasEvent):
            kind = f"an alias *{anchor}"
        elif anchor:
            kind = f"an anchor &{anchor}"
        else:
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
            if depth > CONFIG_MAX_DEPTH:
                raise ConfigError(
                    f"{source}:{line}: nested deeper than {CONFIG_MAX_DEPTH} levels "
                    "(a compilegate config needs 5)"
                )
            continue
        raise ConfigError(
            f"{source}:{line}: {_shortened(kind)}: YAML anchors and aliases are not allowed "
            "in a compilegate config; write the value out"
        )


def _validate_schema(raw: dict[str, Any], node: yaml.Node, source: str) -> None:
    require_jsonschema()
    validator = bounded_validator(load_schema("config"))
    # The first MAX_ERRORS the walk finds, the shallowest of them shown: a hostile config
    # holds one error per value (87,308 empty steps: 754 MB when all were sorted, issue 51).
    found = itertools.islice(validator.iter_errors(raw), MAX_ERRORS)
    errors = sorted(found, key=lambda e: (len(e.path), list(map(str, e.path))))
    if not errors:
        return
    error = errors[0]
    path = list(error.path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        schema = error.schema if isinstance(error.schema, Mapping) else {}
        allowed = schema.get("properties", {})
        path.append(next(k for k in error.instance if k not in allowed))
    line = _line_of(node, path)
    key = _shortened(format_key_path(path))
    raise ConfigError(f"{source}:{line}: {key}: {_describe(error, path)}")


def _describe(error: jsonschema.ValidationError, path: list[Any]) -> str:
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        schema = error.schema if isinstance(error.schema, Mapping) else {}
        allowed = sorted(schema.get("properties", {}))
        near = difflib.get_close_matches(str(path[-1]), allowed, n=1)
        meant = f" (did you mean {near[0]}?)" if near else ""
        return f"{_shown(path[-1])} was unexpected{meant}; allowed keys: {', '.join(allowed)}"
    if error.validator == "enum":
        enum = error.validator_value if isinstance(error.validator_value, list) else []
        options = ", ".join("null" if o is None else str(o) for o in enum)
        return f"{_shown(error.instance)} is not one of: {options}"
    if error.validator == "maxItems" and isinstance(error.instance, list):
        return f"{len(error.instance)} items, at most {error.validator_value}"
    if error.validator == "maxLength":
        return f"{_shown(error.instance)} is too long: at most {error.validator_value} characters"
    # jsonschema's message quotes the value (`'ten' is not of type 'integer'`): cut in the
    # middle, so that what was expected, at the end, stays.
    return _shortened(error.message, keep_end=MAX_SHOWN_CHARS // 2)


def _shown(value: Any) -> str:
    """repr(value), cut at MAX_SHOWN_CHARS: an error names a value, it does not print it."""
    return _shortened(_BOUNDED_REPR.repr(value))


def _shortened(text: str, keep_end: int = 0) -> str:
    """One line of at most MAX_SHOWN_CHARS characters; what is cut is marked `…`, its last
    `keep_end` characters kept."""
    flat = " ".join(text.split())
    if len(flat) <= MAX_SHOWN_CHARS:
        return flat
    head = MAX_SHOWN_CHARS - 1 - keep_end
    return flat[:head] + "…" + (flat[-keep_end:] if keep_end else "")


def _bounded_repr() -> reprlib.Repr:
    bounded = reprlib.Repr()
    bounded.maxstring = bounded.maxother = MAX_SHOWN_CHARS
    return bounded


_BOUNDED_REPR = _bounded_repr()


def _line_of(node: yaml.Node | None, path: list[Any]) -> int:
    """The 1-based line of the YAML node at `path`, or of its nearest existing parent."""
    line = node.start_mark.line + 1 if node is not None else 1
    current = node
    for part in path:
        if isinstance(current, yaml.MappingNode):
            pair = next(((k, v) for k, v in current.value if k.value == part), None)
            if pair is None:
                break
            key_node, match = pair
            line = key_node.start_mark.line + 1
            current = match
        elif isinstance(current, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(current.value):
                break
            current = current.value[part]
            line = current.start_mark.line + 1
        else:
            break
    return line
