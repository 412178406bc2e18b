"""A hostile step that hands the host a forged result and kills its compilegate (issue 38).

It writes the run's result.json (/out in a container) as FORGE_RESULT_SHAPE says — `nested`:
200,000 `[` (a RecursionError for json.loads), `wide:BYTES`: `[{},{},…]` of BYTES (about 50
bytes of host memory a byte when parsed whole), `long-keys`: objects 31 deep under keys of
4,096 bytes over 249,999 NaN (1.1 MB within every limit of the reader; 31 GB of key paths
before issue 51) — and SIGKILLs the compilegate that started it, so that what the host
collects and reads is the forgery. The host must refuse it in one line, in bounded memory,
and still write its report.
"""

import os
import signal
import time


def make_step(device="cpu"):
    shape = os.environ["FORGE_RESULT_SHAPE"]
    out = os.path.join(os.environ.get("FORGE_OUT_DIR", "/out"), "result.json")
    with open(out + ".partial", "wb") as handle:
        if shape == "nested":
            handle.write(b"[" * 200_000)
        elif shape == "long-keys":
            keys = [b"%02d" % level + b"A" * 4094 for level in range(31)]
            handle.write(b"".join(b'{"' + key + b'":' for key in keys))
            handle.write(b"[" + b",".join([b"NaN"] * 249_999) + b"]" + b"}" * len(keys))
        else:
            size = int(shape.split(":")[1])
            handle.write(b"[" + b"{}," * (size // 3 - 1) + b"{}]")
    os.replace(out + ".partial", out)
    os.kill(os.getppid(), signal.SIGKILL)  # its compilegate: the forgery is the result
    time.sleep(60)
    raise SystemExit("still alive")
