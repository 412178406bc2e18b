"""Load and validate compilegate.yml into frozen dataclasses.

Every error is a ConfigError whose one-line message names the file, the line and the key
path (`steps[0].variants[1].mode`) and says what was expected.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from .errors import ConfigError
from .schemas import load_schema

DEFAULT_STEP_SETTINGS: dict[str, Any] = {
    "device": "auto",
    "variants": [{"mode": "default"}],
    "warmup": 5,
    "iterations": 50,
    "rounds": 10,
    "timeout_s": 600,
    "seed": 0,
    "amp": None,
    "threads": None,
    "eager_processes": 2,
}
DEFAULT_NUMERICS: dict[str, Any] = {"enabled": True, "steps": 2, "tol": 1e-4, "cosine_min": 0.99}
DEFAULT_THRESHOLDS: dict[str, float] = {
    "speedup_drop_pct": 5.0,
    "eager_step_time_growth_pct": 5.0,
    "compiled_step_time_growth_pct": 5.0,
    "compile_time_growth_pct": 25.0,
    "peak_memory_growth_pct": 10.0,
    "recompiles_increase": 0,
    "graph_break_sites_increase": 0,
    "fallbacks_increase": 0,
}
# reduce-overhead records CUDA graphs on the 2nd call and replays from the 3rd (cudagraph_trees.py).
MIN_WARMUP_REDUCE_OVERHEAD = 5


@dataclass(frozen=True)
class Variant:
    """One compiled configuration of a step: torch.compile(mode, dynamic) on model or step."""

    id: str
    mode: str = "default"
    dynamic: bool | None = None
    compile_target: str = "model"
    fullgraph: bool = False
    backend: str = "inductor"

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Variant:
        mode = raw.get("mode", "default")
        dynamic = raw.get("dynamic")
        target = raw.get("compile", "model")
        fullgraph = bool(raw.get("fullgraph", False))
        backend = raw.get("backend", "inductor")
        derived = mode
        if dynamic is not None:
            derived += "+dynamic" if dynamic else "+static"
        if target == "step":
            derived += "+step"
        if fullgraph:
            derived += "+fullgraph"
        if backend != "inductor":
            derived += f"+{backend}"
        return cls(raw.get("name", derived), mode, dynamic, target, fullgraph, backend)

    def compile_kwargs(self) -> dict[str, Any]:
        """The keyword arguments handed to torch.compile."""
        kwargs: dict[str, Any] = {"backend": self.backend, "fullgraph": self.fullgraph}
        if self.backend == "inductor":
            kwargs["mode"] = self.mode
        if self.dynamic is not None:
            kwargs["dynamic"] = self.dynamic
        return kwargs


@dataclass(frozen=True)
class NumericsSettings:
    enabled: bool = True
    steps: int = 2
    tol: float = 1e-4
    cosine_min: float = 0.99


@dataclass(frozen=True)
class StepConfig:
    """Everything needed to measure one declared training step."""

    name: str
    entry: str
    device: str
    variants: tuple[Variant, ...]
    warmup: int
    iterations: int
    rounds: int
    timeout_s: float
    seed: int
    amp: str | None
    threads: int | None
    eager_processes: int
    numerics: NumericsSettings
    thresholds: dict[str, float] = field(default_factory=dict)

    def measurement_settings(self) -> dict[str, Any]:
        """What the child process needs to measure this step (also recorded in the result)."""
        return {
            "warmup": self.warmup,
            "iterations": self.iterations,
            "rounds": self.rounds,
            "seed": self.seed,
            "amp": self.amp,
            "threads": self.threads,
            "numerics": dataclasses.asdict(self.numerics),
        }

    def fingerprint(self) -> str:
        """Hash of what makes two measurements of this step comparable (not the model code)."""
        comparable = {
            "entry": self.entry,
            "device": self.device,
            "variants": [dataclasses.asdict(v) for v in self.variants],
            "warmup": self.warmup,
            "iterations": self.iterations,
            "rounds": self.rounds,
            "seed": self.seed,
            "amp": self.amp,
            "threads": self.threads,
        }
        blob = json.dumps(comparable, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


@dataclass(frozen=True)
class Config:
    path: Path
    repo_root: Path
    steps: tuple[StepConfig, ...]
    baseline: str | None = None
    torch_versions: tuple[str, ...] = ()
    sha256: str = ""

    @classmethod
    def from_file(cls, path: Path, repo_root: Path | None = None) -> Config:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(f"{path}: config file not found") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read config: {exc}") from None
        root = (repo_root or path.resolve().parent).resolve()
        config = cls.from_text(text, source=str(path), repo_root=root)
        return dataclasses.replace(config, path=path)

    @classmethod
    def from_text(cls, text: str, *, source: str, repo_root: Path) -> Config:
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
                    f"{source}:{line}: steps[{index}].name: duplicate step name {name!r} "
                    f"(also steps[{seen[name]}])"
                )
            seen[name] = index
            steps.append(_build_step(step_raw, defaults, global_thresholds, index, node, source))
        sha = hashlib.sha256(text.encode()).hexdigest()
        return cls(
            path=Path(source),
            repo_root=repo_root,
            steps=tuple(steps),
            baseline=raw.get("baseline"),
            torch_versions=tuple(raw.get("torch", ())),
            sha256=sha,
        )

    def select(self, names: list[str]) -> Config:
        """Keep only the named steps; an unknown name is an error."""
        if not names:
            return self
        known = {s.name for s in self.steps}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ConfigError(
                f"{self.path}: --step {unknown[0]!r} is not declared "
                f"(declared: {', '.join(sorted(known))})"
            )
        return dataclasses.replace(self, steps=tuple(s for s in self.steps if s.name in names))


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
                f"{source}:{line}: steps[{index}].variants[{vi}]: duplicate variant {vid!r}; "
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
        numerics=numerics,
        thresholds=thresholds,
    )


class _UniqueKeyLoader(yaml.SafeLoader):
    """A SafeLoader that refuses duplicate mapping keys (YAML silently keeps the last one)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _parse_yaml(text: str, source: str) -> tuple[Any, yaml.Node]:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        raw = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}" if mark else source
        problem = exc.problem or str(exc)
        raise ConfigError(f"{where}: malformed YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: malformed YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}:1: expected a mapping with 'version' and 'steps' at the top")
    return raw, node


def _validate_schema(raw: dict[str, Any], node: yaml.Node, source: str) -> None:
    validator = jsonschema.Draft202012Validator(load_schema("config"))
    errors = sorted(validator.iter_errors(raw), key=lambda e: (len(e.path), list(map(str, e.path))))
    if not errors:
        return
    error = errors[0]
    path = list(error.path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = error.schema.get("properties", {})
        path.append(next(k for k in error.instance if k not in allowed))
    line = _line_of(node, path)
    key = _format_path(path) or "(top level)"
    raise ConfigError(f"{source}:{line}: {key}: {_describe(error)}")


def _describe(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        return f"{error.message}; allowed keys: {', '.join(allowed)}"
    if error.validator == "enum":
        options = ", ".join("null" if o is None else str(o) for o in error.validator_value)
        return f"{error.instance!r} is not one of: {options}"
    if error.validator == "required":
        return error.message
    return error.message


def _format_path(path: list[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _line_of(node: yaml.Node | None, path: list[Any]) -> int:
    """The 1-based line of the YAML node at `path`, or of its nearest existing parent."""
    line = node.start_mark.line + 1 if node is not None else 1
    current = node
    for part in path:
        if isinstance(current, yaml.MappingNode):
            match = next((v for k, v in current.value if k.value == part), None)
            key_node = next((k for k, v in current.value if k.value == part), None)
            if match is None:
                break
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
