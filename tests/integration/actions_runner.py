"""Just enough of a GitHub Actions runner to run our action's and workflows' `run:` steps on
this machine the way the real runner does:

- each `run:` is written to a script file under RUNNER_TEMP and run by
  `bash --noprofile --norc -eo pipefail FILE` (`shell: bash`) or `bash -e FILE` (no shell:
  the runner's default on Linux), in the step's working directory (GITHUB_WORKSPACE unless
  `working-directory:` says otherwise);
- `${{ }}` expressions in `env:`, `with:`, `if:` and `working-directory:` are evaluated over
  the contexts the steps use (inputs, steps, github, matrix, runner, env, secrets, needs),
  with `||`, `&&`, `!`, `==`, `!=` and the status functions;
- a fresh GITHUB_OUTPUT, GITHUB_ENV and GITHUB_PATH file per step; what a step appends to
  GITHUB_ENV is in every later step's environment (which is how a host-side compromise
  reaches the step holding the token, so it is reproduced);
- `uses:` of the compilegate action (`./…` or `compilegate/compilegate@…`) runs the
  composite action's steps with `with:` as its inputs and its `outputs:` as the step's;
  other `uses:` are given to a stand-in the test supplies, or recorded as not run.

It is a test seam, not act: `act` (tests/e2e) runs the workflows with the real parser.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}", re.S)
_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+(?:\.\d+)?)|(?P<op>\|\||&&|==|!=|!|\(|\)|,)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_.\-*]*))"
)
COMPILEGATE_ACTION = re.compile(r"^(\./.*|compilegate/compilegate@[0-9a-f]{40})$")
BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]
DEFAULT_SHELL = ["bash", "-e"]

StandIn = Callable[[dict[str, Any], dict[str, str], "Runner"], dict[str, str]]
"""A replacement for a `uses:` action: (step, rendered with:, runner) → its outputs."""


@dataclass
class StepRecord:
    name: str
    skipped: str | None = None
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""


class Runner:
    """Runs one job (or one composite action) of a workflow file."""

    def __init__(
        self,
        *,
        workspace: Path,
        runner_temp: Path,
        base_env: Mapping[str, str],
        github: Mapping[str, Any],
        action_root: Path,
        matrix: Mapping[str, Any] | None = None,
        needs: Mapping[str, Any] | None = None,
        secrets: Mapping[str, str] | None = None,
        stand_ins: Mapping[str, StandIn] | None = None,
        run_every_step: bool = False,
        timeout_s: float = 3000,
    ) -> None:
        """`run_every_step`: ignore `if:` and earlier failures, so that every `run:` step
        executes (what a test of host-side starts wants); otherwise as the runner decides."""
        self.workspace = workspace
        self.runner_temp = runner_temp
        self.base_env = dict(base_env)
        self.github = dict(github)
        self.action_root = action_root
        self.matrix = dict(matrix or {})
        self.needs = dict(needs or {})  # the jobs this one needs: {job: {"outputs": {...}}}
        self.secrets = dict(secrets or {})
        self.stand_ins = dict(stand_ins or {})
        self.run_every_step = run_every_step
        self.timeout_s = timeout_s
        self.added_env: dict[str, str] = {}
        self.added_path: list[str] = []
        self.records: list[StepRecord] = []
        self._counter = 0

    # --- jobs and actions -------------------------------------------------------------------

    def run_job(self, workflow: Mapping[str, Any], job_id: str) -> dict[str, dict[str, Any]]:
        job = workflow["jobs"][job_id]
        env = {**_str_map(workflow.get("env")), **_str_map(job.get("env"))}
        contexts = self._contexts(inputs=dict(self.github.get("event", {}).get("inputs") or {}))
        return self._run_steps(job.get("steps") or [], contexts, env, composite=False)

    def run_action(self, inputs: Mapping[str, str], action_path: Path | None = None) -> dict:
        """The composite action's steps; returns its outputs."""
        action_path = action_path or self.action_root
        action = yaml.safe_load((action_path / "action.yml").read_text())
        defaults = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
        # GitHub warns about an input the action does not declare, and runs without it.
        given = {k: v for k, v in inputs.items() if k in defaults}
        contexts = self._contexts(inputs={**defaults, **given})
        contexts["github"] = {**contexts["github"], "action_path": str(action_path)}
        contexts["steps"] = self._run_steps(action["runs"]["steps"], contexts, {}, composite=True)
        return {
            name: self.render(str(spec.get("value", "")), contexts)
            for name, spec in (action.get("outputs") or {}).items()
        }

    def _contexts(self, *, inputs: dict[str, str]) -> dict[str, Any]:
        return {
            "inputs": inputs,
            "github": {**self.github, "workspace": str(self.workspace)},
            "runner": {"temp": str(self.runner_temp), "os": "Linux"},
            "matrix": self.matrix,
            "secrets": self.secrets,
            "steps": {},
            "env": {},
            "needs": self.needs,
        }

    def _run_steps(
        self, steps: list[dict[str, Any]], contexts: dict[str, Any], env: dict[str, str],
        *, composite: bool,
    ) -> dict[str, dict[str, Any]]:  # fmt: skip
        outcomes: dict[str, dict[str, Any]] = {}
        contexts["steps"] = outcomes
        failed = False
        for step in steps:
            name = str(step.get("name") or step.get("uses") or step.get("run", "")[:40])
            contexts["env"] = {**env, **self.added_env}
            status = {"failed": failed}
            condition = str(step.get("if", "success()"))
            if not self.run_every_step and not _truthy(self.evaluate(condition, contexts, status)):
                self.records.append(StepRecord(name, skipped="if: false"))
                continue
            step_env = {k: self.render(v, contexts) for k, v in _str_map(step.get("env")).items()}
            if "uses" in step:
                outputs, ok = self._uses(step, contexts, step_env)
            else:
                outputs, ok = self._run(step, contexts, {**env, **step_env}, name, composite)
            if "id" in step:
                outcomes[step["id"]] = {
                    "outputs": outputs,
                    "outcome": "success" if ok else "failure",
                }
            if not ok and not _truthy(
                self.render(str(step.get("continue-on-error", "")), contexts)
            ):
                failed = True
        return outcomes

    def _uses(
        self, step: dict[str, Any], contexts: dict[str, Any], env: dict[str, str]
    ) -> tuple[dict[str, str], bool]:
        uses = str(step["uses"])
        given = {k: self.render(v, contexts) for k, v in _str_map(step.get("with")).items()}
        if COMPILEGATE_ACTION.match(uses):
            path = self.workspace / uses if uses.startswith("./") else self.action_root
            before = sum(1 for r in self.records if r.returncode not in (None, 0))
            outputs = self.run_action(given, path)
            failed = sum(1 for r in self.records if r.returncode not in (None, 0)) > before
            return outputs, not failed
        for prefix, stand_in in self.stand_ins.items():
            if uses.startswith(prefix):
                self.records.append(StepRecord(str(step.get("name") or uses), skipped="stand-in"))
                return stand_in(step, given, self), True
        self.records.append(StepRecord(str(step.get("name") or uses), skipped=f"uses: {uses}"))
        return {}, True

    def _run(
        self, step: dict[str, Any], contexts: dict[str, Any], env: dict[str, str], name: str,
        composite: bool,
    ) -> tuple[dict[str, str], bool]:  # fmt: skip
        self._counter += 1
        files = {
            kind: self.runner_temp / "_runner_file_commands" / f"{kind}_{self._counter}"
            for kind in ("output", "env", "path", "script")
        }
        files["output"].parent.mkdir(parents=True, exist_ok=True)
        for kind in ("output", "env", "path"):
            files[kind].write_text("")
        files["script"].write_text(str(step["run"]))
        shell = step.get("shell")
        assert shell in ("bash", None), f"{name}: shell {shell!r} is not handled here"
        assert shell or not composite, f"{name}: a composite step must name its shell"
        full_env = {
            **self.base_env,
            **self.added_env,
            **env,
            "GITHUB_OUTPUT": str(files["output"]),
            "GITHUB_ENV": str(files["env"]),
            "GITHUB_PATH": str(files["path"]),
            "GITHUB_WORKSPACE": str(self.workspace),
            "RUNNER_TEMP": str(self.runner_temp),
        }
        if self.added_path:
            full_env["PATH"] = ":".join([*self.added_path, full_env.get("PATH", "")])
        cwd = self.workspace / self.render(str(step.get("working-directory", ".")), contexts)
        command = [*(BASH if shell == "bash" else DEFAULT_SHELL), str(files["script"])]
        proc = subprocess.run(
            command, cwd=cwd, env=full_env, capture_output=True, text=True, check=False,
            timeout=self.timeout_s,
        )  # fmt: skip
        self.records.append(
            StepRecord(name, None, proc.returncode, proc.stdout, proc.stderr, full_env, str(cwd))
        )
        self.added_env.update(parse_file_command(files["env"].read_text()))
        self.added_path[:0] = [p for p in files["path"].read_text().splitlines() if p]
        return parse_file_command(files["output"].read_text()), proc.returncode == 0

    # --- expressions --------------------------------------------------------------------------

    def render(self, text: Any, contexts: dict[str, Any]) -> str:
        def one(match: re.Match[str]) -> str:
            value = self.evaluate(match.group(1), contexts, {"failed": False})
            return (
                ""
                if value is None
                else str(value).lower()
                if isinstance(value, bool)
                else str(value)
            )

        return EXPRESSION.sub(one, str(text))

    def evaluate(self, text: str, contexts: dict[str, Any], status: dict[str, bool]) -> Any:
        inner = EXPRESSION.fullmatch(text.strip())
        source = inner.group(1) if inner else text
        tokens = _tokens(source)
        parser = _Parser(tokens, contexts, status)
        value = parser.expression()
        assert parser.position == len(tokens), f"expression not understood: {source}"
        return value


def parse_file_command(text: str) -> dict[str, str]:
    """`name=value` lines and `name<<DELIMITER` blocks, as the runner reads GITHUB_OUTPUT and
    GITHUB_ENV."""
    out: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and "=" not in line.split("<<")[0]:
            name, delimiter = line.split("<<", 1)
            out[name] = "\n".join(iter(lambda: next(lines), delimiter))
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
    return out


# How the runner reads a step's output (actions/runner: ProcessInvoker reads lines with .NET's
# StreamReader.ReadLine, which ends a line at LF, CR or CRLF; ActionCommandManager then tries
# ActionCommand.TryParseV2 on the line with its leading whitespace trimmed — `::name
# properties::data` — and the legacy ActionCommand.TryParse, `##[name properties]data`
# anywhere in the line). Stricter than the runner: any name counts, registered or not.
_READ_LINE = re.compile(r"\r\n|\r|\n")
_LEGACY_COMMAND = re.compile(r"##\[([^\]\s]*)[^\]]*\]")


def workflow_commands(output: str) -> list[str]:
    """Every line of `output` the runner would take for a workflow command."""
    found = []
    for line in _READ_LINE.split(output):
        trimmed = line.lstrip()  # .NET TrimStart: every Unicode white space, as str.lstrip
        if trimmed.startswith("::") and trimmed.find("::", 2) >= 0:
            found.append(trimmed)
        elif _LEGACY_COMMAND.search(line):
            found.append(line)
    return found


def _str_map(value: Any) -> dict[str, str]:
    return {str(k): "" if v is None else str(v) for k, v in (value or {}).items()}


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value not in ("", "false")
    return bool(value)


def _tokens(source: str) -> list[tuple[str, str]]:
    out, position = [], 0
    source = source.rstrip()
    while position < len(source):
        match = _TOKEN.match(source, position)
        assert match and match.end() > position, f"expression not understood: {source}"
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        position = match.end()
    return out


class _Parser:
    """or → and (`||` and)*; and → compare (`&&` compare)*; compare → unary ((== | !=) unary)?;
    unary → `!` unary | primary. `||`/`&&` return operand values, as GitHub's do."""

    def __init__(self, tokens: list[tuple[str, str]], contexts: dict, status: dict) -> None:
        self.tokens, self.contexts, self.status, self.position = tokens, contexts, status, 0

    def peek(self) -> str | None:
        return self.tokens[self.position][1] if self.position < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        self.position += 1
        return self.tokens[self.position - 1]

    def expression(self) -> Any:
        value = self.conjunction()
        while self.peek() == "||":
            self.take()
            other = self.conjunction()
            value = value if _truthy(value) else other
        return value

    def conjunction(self) -> Any:
        value = self.comparison()
        while self.peek() == "&&":
            self.take()
            other = self.comparison()
            value = other if _truthy(value) else value
        return value

    def comparison(self) -> Any:
        left = self.unary()
        if self.peek() in ("==", "!="):
            op = self.take()[1]
            right = self.unary()
            same = str(left).lower() == str(right).lower()
            return same if op == "==" else not same
        return left

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return not _truthy(self.unary())
        return self.primary()

    def primary(self) -> Any:
        kind, text = self.take()
        if text == "(":
            value = self.expression()
            assert self.take()[1] == ")"
            return value
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return float(text) if "." in text else int(text)
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        if self.peek() == "(":
            self.take()
            args = []
            while self.peek() != ")":
                args.append(self.expression())
                if self.peek() == ",":
                    self.take()
            self.take()
            return self.call(text, args)
        return self.reference(text)

    def call(self, name: str, args: list[Any]) -> Any:
        if name == "always":
            return True
        if name == "success":
            return not self.status["failed"]
        if name == "failure":
            return self.status["failed"]
        if name == "cancelled":
            return False
        if name == "contains":
            return str(args[1]).lower() in str(args[0]).lower()
        if name == "startsWith":
            return str(args[0]).lower().startswith(str(args[1]).lower())
        raise AssertionError(f"function not handled here: {name}")

    def reference(self, dotted: str) -> Any:
        node: Any = self.contexts
        for part in dotted.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        return "" if node is None else node
