from __future__ import annotations

import time
from pathlib import Path

import pytest

from compilegate.config import DEFAULT_THRESHOLDS, Config, Variant
from compilegate.config.loading import load_config_file
from compilegate.errors import ConfigError

GOOD = """\
version: 1
thresholds: {speedup_drop_pct: 7}
defaults: {warmup: 6, iterations: 40}
steps:
  - name: transformer
    entry: examples/transformer_step.py:make_step
    device: auto
    variants:
      - {mode: default}
      - {mode: reduce-overhead}
      - {mode: default, dynamic: true}
      - {mode: default, compile: step}
    timeout_s: 600
    thresholds: {compile_time_growth_pct: 50}
  - name: small
    entry: pkg.steps:make
    iterations: 10
"""


def load(text: str, tmp_path: Path) -> Config:
    path = tmp_path / "compilegate.yml"
    path.write_text(text)
    return load_config_file(path)


def error_of(text: str, tmp_path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load(text, tmp_path)
    message = str(info.value)
    assert "\n" not in message, "errors are one line"
    return message


def test_good_config_merges_defaults_globals_and_step_settings(tmp_path: Path) -> None:
    config = load(GOOD, tmp_path)
    big, small = config.steps
    assert [v.id for v in big.variants] == [
        "default",
        "reduce-overhead",
        "default+dynamic",
        "default+step",
    ]
    assert big.warmup == 6 and big.iterations == 40 and big.timeout_s == 600
    assert small.iterations == 10 and small.variants == (Variant("default"),)
    assert big.thresholds["speedup_drop_pct"] == 7
    assert big.thresholds["compile_time_growth_pct"] == 50
    assert (
        small.thresholds["compile_time_growth_pct"] == DEFAULT_THRESHOLDS["compile_time_growth_pct"]
    )
    assert config.repo_root == tmp_path.resolve()


def test_compile_kwargs_follow_the_variant() -> None:
    assert Variant.from_dict({"mode": "max-autotune", "dynamic": False}).compile_kwargs() == {
        "backend": "inductor",
        "fullgraph": False,
        "mode": "max-autotune",
        "dynamic": False,
    }
    eager_backend = Variant.from_dict({"backend": "eager"})
    assert eager_backend.id == "default+eager"
    assert "mode" not in eager_backend.compile_kwargs()


def test_fingerprint_changes_with_settings_not_with_thresholds(tmp_path: Path) -> None:
    a = load(GOOD, tmp_path).steps[0]
    b = load(
        GOOD.replace("compile_time_growth_pct: 50", "compile_time_growth_pct: 9"), tmp_path
    ).steps[0]
    c = load(GOOD.replace("timeout_s: 600\n", "timeout_s: 600\n    warmup: 9\n"), tmp_path).steps[0]
    assert a.fingerprint() == b.fingerprint()
    assert a.fingerprint() != c.fingerprint()


def test_malformed_yaml_names_file_and_line(tmp_path: Path) -> None:
    message = error_of("version: 1\nsteps:\n  - name: a\n    entry: [x\n", tmp_path)
    assert "compilegate.yml:" in message and "malformed YAML" in message


def test_unknown_key_names_line_path_and_allowed_keys(tmp_path: Path) -> None:
    text = GOOD.replace("    timeout_s: 600\n", "    timeout_s: 600\n    warmpu: 3\n")
    message = error_of(text, tmp_path)
    assert "compilegate.yml:14: steps[0].warmpu:" in message
    assert "'warmpu' was unexpected (did you mean warmup?); allowed keys:" in message
    unlike = error_of(
        GOOD.replace("    timeout_s: 600\n", "    timeout_s: 600\n    zzz: 3\n"), tmp_path
    )
    assert "'zzz' was unexpected; allowed keys:" in unlike  # no near key: no guess


def test_bad_enum_value_names_key_path(tmp_path: Path) -> None:
    message = error_of(GOOD.replace("{mode: reduce-overhead}", "{mode: turbo}"), tmp_path)
    assert "compilegate.yml:10: steps[0].variants[1].mode:" in message
    assert "'turbo' is not one of" in message and "max-autotune" in message


def test_wrong_type_and_missing_required(tmp_path: Path) -> None:
    assert "steps[1].iterations" in error_of(
        GOOD.replace("iterations: 10", "iterations: ten"), tmp_path
    )
    assert "'entry' is a required property" in error_of(
        "version: 1\nsteps:\n  - name: a\n", tmp_path
    )
    assert "version" in error_of("version: 2\nsteps: [{name: a, entry: a.py:f}]\n", tmp_path)


def test_duplicate_keys_names_and_variants_are_refused(tmp_path: Path) -> None:
    assert "duplicate key 'entry'" in error_of(
        "version: 1\nsteps:\n  - name: a\n    entry: a.py:f\n    entry: b.py:f\n", tmp_path
    )
    assert "duplicate step name 'small'" in error_of(
        GOOD + "  - name: small\n    entry: x.py:f\n", tmp_path
    )
    assert "duplicate variant 'default'" in error_of(
        GOOD.replace("{mode: reduce-overhead}", "{mode: default}"), tmp_path
    )


def test_reduce_overhead_needs_five_warmup_iterations(tmp_path: Path) -> None:
    message = error_of(GOOD.replace("warmup: 6", "warmup: 2"), tmp_path)
    assert "reduce-overhead needs warmup >= 5" in message


def test_more_rounds_than_iterations_is_refused(tmp_path: Path) -> None:
    assert "rounds" in error_of(
        GOOD.replace("iterations: 10", "iterations: 4\n    rounds: 8"), tmp_path
    )


def test_missing_file_and_non_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config_file(tmp_path / "nope.yml")
    assert "expected a mapping" in error_of("- 1\n- 2\n", tmp_path)


def test_select_unknown_step_lists_declared(tmp_path: Path) -> None:
    config = load(GOOD, tmp_path)
    assert [s.name for s in config.select(["small"]).steps] == ["small"]
    # the result records what was declared, so the gate tells "not selected" from "removed"
    assert config.select(["small"]).declared_steps == ("transformer", "small")
    with pytest.raises(ConfigError, match="declared: small, transformer"):
        config.select(["nope"])


def test_example_config_is_valid(repo_root: Path) -> None:
    config = load_config_file(repo_root / "examples" / "compilegate.yml")
    assert config.steps[0].name == "transformer"


ENV_STEP = """\
version: 1
defaults: {env: [DATA_DIR]}
steps:
  - name: hub
    entry: a.py:f
    env: [HF_HOME, TORCH_HOME]
  - name: plain
    entry: a.py:f
"""


def test_env_opt_in_is_per_step_with_defaults(tmp_path: Path) -> None:
    hub, plain = load(ENV_STEP, tmp_path).steps
    assert hub.env == ("HF_HOME", "TORCH_HOME")
    assert plain.env == ("DATA_DIR",)
    assert load(GOOD, tmp_path).steps[0].env == ()


@pytest.mark.parametrize(
    ("names", "fragments"),
    [
        ("[HF_HOME, GITHUB_TOKEN]", ["compilegate.yml:5: steps[0].env[1]: GITHUB_TOKEN", "GITHUB"]),
        ("[WANDB_API_KEY]", ["steps[0].env[0]: WANDB_API_KEY is never passed", "KEY"]),
        ("[AWS_REGION]", ["steps[0].env[0]: AWS_REGION", "AWS_* family"]),
        ("[MY_SECRET_PATH]", ["steps[0].env[0]", "SECRET"]),
        ("[PYTHONPATH]", ["steps[0].env[0]: PYTHONPATH", "without PYTHONPATH"]),
        ("[HOME]", ["steps[0].env[0]: HOME", "compilegate sets it"]),
        ("[1BAD]", ["steps[0].env[0]", "does not match"]),
        ("[HF_HOME, HF_HOME]", ["steps[0].env", "non-unique"]),
    ],
)
def test_env_opt_in_of_a_secret_or_controlled_name_is_a_config_error(
    tmp_path: Path, names: str, fragments: list[str]
) -> None:
    text = f"version: 1\nsteps:\n  - name: s\n    entry: a.py:f\n    env: {names}\n"
    message = error_of(text, tmp_path)
    for fragment in fragments:
        assert fragment in message, message


def test_env_opt_in_in_defaults_is_checked_too(tmp_path: Path) -> None:
    message = error_of(ENV_STEP.replace("[DATA_DIR]", "[DATA_DIR, SSH_AUTH_SOCK]"), tmp_path)
    assert "compilegate.yml:2: defaults.env[1]: SSH_AUTH_SOCK is never passed" in message


def test_steps_per_run_and_epoch_default_and_per_step(tmp_path: Path) -> None:
    config = load(
        GOOD.replace("defaults: {warmup: 6,", "defaults: {steps_per_run: 250000, warmup: 6,")
        + "    epoch: {length: 100}\n",
        tmp_path,
    )
    transformer, small = config.steps
    assert transformer.steps_per_run == small.steps_per_run == 250_000
    assert (transformer.epoch_length, small.epoch_length) == (None, 100)
    assert small.measurement_settings()["epoch_length"] == 100
    assert load(GOOD, tmp_path).steps[0].steps_per_run == 10_000  # documented default


def test_bad_steps_per_run_and_epoch_name_their_line(tmp_path: Path) -> None:
    message = error_of(GOOD + "    steps_per_run: 0\n", tmp_path)
    assert message.endswith(":18: steps[1].steps_per_run: 0 is less than the minimum of 1")
    message = error_of(GOOD + "    epoch: {every: 100}\n", tmp_path)
    assert ":18: steps[1].epoch" in message


def alias_bomb(levels: int) -> str:
    """A config whose step name holds 9**(levels + 1) strings of 16 bytes, in about 40 bytes
    a level: each list holds its predecessor nine times by alias (issue 29)."""
    lists = [f"&a0 [{','.join(['x' * 16] * 9)}]"]
    lists += [f"&a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return f"version: 1\nsteps:\n  - entry: x.py:f\n    name: [{', '.join(lists)}]\n"


def test_an_alias_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    text = alias_bomb(7)  # 9**8 strings: validated and printed, 3.9 GB before issue 29
    assert len(text.encode()) < 520
    message = error_of(text, tmp_path)
    assert message.startswith(f"{tmp_path / 'compilegate.yml'}:4: an anchor &a0: ")
    assert "anchors and aliases are not allowed" in message
    assert len(message) < 300


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("version: 1\nsteps:\n  - &s {name: a, entry: x.py:f}\n  - *s\n", ":3: an anchor &s"),
        (  # a merge key needs an alias: refused at the anchor it names
            "version: 1\ndefaults:\n  numerics: &n {tol: 0.1}\nsteps:\n"
            "  - {name: a, entry: x.py:f, numerics: {<<: *n}}\n",
            ":3: an anchor &n",
        ),
        ("version: 1\nsteps: *undefined\n", ":2: an alias *undefined"),
    ],
)
def test_anchors_aliases_and_merge_keys_are_refused_naming_the_line(
    tmp_path: Path, text: str, where: str
) -> None:
    message = error_of(text, tmp_path)
    assert f"compilegate.yml{where}: " in message
    assert "write the value out" in message


def test_an_error_shows_a_long_value_cut_short(tmp_path: Path) -> None:
    """A value up to the file's megabyte: an error names it in at most a few hundred
    characters; names and entries, which later messages and reports repeat, are bounded."""
    long = "x" * 200_000
    for text in (
        GOOD.replace("{mode: reduce-overhead}", f"{{mode: {long}}}"),  # enum
        GOOD.replace("iterations: 10", f"iterations: {long}"),  # type
        GOOD.replace("    iterations: 10\n", f"    iterations: 10\n    ? {long}\n    : 1\n"),
        GOOD + f"  - name: z\n    entry: x.py:f\n    ? {long}\n    : 1\n    ? {long}\n    : 2\n",
        GOOD.replace("pkg.steps:make", f"{long}.py:make"),  # too long: never printed later
        GOOD.replace("    iterations: 10\n", f"    iterations: 10\n    env: [{long}]\n"),
    ):
        message = error_of(text, tmp_path)
        assert len(message) < 700, message[:700]  # with the 24 allowed keys listed
        assert "compilegate.yml:" in message and "x" * 120 not in message
    message = error_of(GOOD.replace("pkg.steps:make", f"{'x' * 501}.py:make"), tmp_path)
    assert "steps[1].entry: 'xxx" in message and "is too long: at most 500 characters" in message


@pytest.mark.parametrize(
    ("nesting", "line"),
    [
        ("    variants: " + "[" * 200_000 + "\n", 5),  # flow: 12 minutes, then RecursionError
        ("    variants: " + "[" * 17 + "]" * 17 + "\n", 5),  # closed, still too deep
        ("    x:\n" + "".join("  " * (3 + i) + f"k{i}:\n" for i in range(20)), 19),  # block
    ],
    ids=["flow-200KB", "flow-closed", "block"],
)
def test_nesting_deeper_than_the_limit_is_refused_before_it_is_parsed(
    tmp_path: Path, nesting: str, line: int
) -> None:
    """Issue 38: PyYAML's scanner is quadratic in flow depth and its composer recursive; the
    event scan that refuses anchors stops at depth 16 (a real config's is 5)."""
    started = time.process_time()
    message = error_of("version: 1\nsteps:\n  - name: a\n    entry: x.py:f\n" + nesting, tmp_path)
    assert time.process_time() - started < 2
    assert message == f"{tmp_path / 'compilegate.yml'}:{line}: nested deeper than 16 levels " + (
        "(a compilegate config needs 5)"
    )


def test_the_compile_levers_are_read_and_their_bad_values_named(tmp_path: Path) -> None:
    """Issue 42's step keys: booleans, and an artifacts process needs a process after the
    cold compiles; a bad value is one line naming the file, line and key."""
    levers = "    iterations: 10\n    cache_artifacts: true\n    regional: true\n"
    step = load(GOOD.replace("    iterations: 10\n", levers), tmp_path).steps[1]
    assert step.cache_artifacts and step.regional
    assert not load(GOOD, tmp_path).steps[1].regional  # off unless asked
    no_room = levers + "    variant_processes: 2\n    cold_compiles: 2\n"
    message = error_of(GOOD.replace("    iterations: 10\n", no_room), tmp_path)
    assert "compilegate.yml:" in message and "steps[1].cache_artifacts" in message
    assert "variant_processes must be at least 3, got 2" in message
    message = error_of(GOOD.replace("    iterations: 10\n", "    regional: yes please\n"), tmp_path)
    assert "compilegate.yml:" in message and "regional" in message
