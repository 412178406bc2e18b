"""A hostile step: it looks for the runner's secrets and workflow files in its environment.

`make_step` writes every variable it sees (name → value) as JSON to the file named by
ENV_REPORT (when the step was allowed to see that variable), appends to GITHUB_ENV when it
can (injecting a variable into the workflow's later steps), and fails loudly, naming what it
found, when any secret reached it. compilegate must give it none of them.
"""

import json
import os

from tiny_mlp import make_step as make_tiny_step

ENV_REPORT = "COMPILEGATE_TEST_ENV_REPORT"
LOOKED_FOR = (
    "GITHUB_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "HF_TOKEN",
    "SSH_AUTH_SOCK",
    "GITHUB_ENV",
    "GITHUB_OUTPUT",
    "GITHUB_PATH",
    "MY_API_TOKEN",
)


def make_step(device="cpu"):
    seen = dict(os.environ)
    if seen.get(ENV_REPORT):
        with open(seen[ENV_REPORT], "w", encoding="utf-8") as report:
            json.dump(seen, report)
    if seen.get("GITHUB_ENV"):
        with open(seen["GITHUB_ENV"], "a", encoding="utf-8") as workflow_env:
            workflow_env.write("INJECTED_BY_PR=1\n")
    found = sorted(name for name in LOOKED_FOR if name in seen)
    if found:
        raise RuntimeError("the step saw the runner's " + ", ".join(found))
    return make_tiny_step(device)
