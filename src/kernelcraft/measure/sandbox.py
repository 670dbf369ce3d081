"""Run a judge job in a worker subprocess with a timeout.

The worker gets its own process group so that a hung kernel, and anything it started, can
be killed as a whole; on CPU it runs with Triton's interpreter switched on, which users
never have to set themselves.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from kernelcraft.cache import cache_dir


def worker_env(device: str, gpu: int | None = None) -> dict[str, str]:
    env = dict(os.environ)
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
        env["CUDA_VISIBLE_DEVICES"] = ""
    else:
        env.pop("TRITON_INTERPRET", None)
        if gpu is not None:
            env["CUDA_VISIBLE_DEVICES"] = str(gpu)
    env.setdefault("TRITON_CACHE_DIR", str(cache_dir() / "triton"))
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def scratch_dir() -> str | None:
    """Where trial outputs go: shared memory when the machine has it (large, fast)."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def run_in_worker(job: dict[str, Any], timeout_s: float, gpu: int | None = None) -> dict[str, Any]:
    """Run ``job`` (see worker.main) and return its result; timeouts and crashes too."""
    with tempfile.TemporaryDirectory(prefix="kernelcraft-job-") as tmp:
        tmpdir = Path(tmp)
        job = dict(job, result=str(tmpdir / "result.json"))
        job_path = tmpdir / "job.json"
        job_path.write_text(json.dumps(job))
        log_path = tmpdir / "worker.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "kernelcraft.measure.worker", str(job_path)],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=worker_env(job["device"], gpu),
                start_new_session=True,
            )
            try:
                rc = proc.wait(timeout=timeout_s)
                _kill_group(proc)  # nothing the worker started outlives it
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                return {
                    "status": "rejected",
                    "correct": False,
                    "reason": "timeout",
                    "detail": f"no result within {timeout_s:.0f} s (hang?)",
                }
        result_path = Path(job["result"])
        if result_path.is_file():
            return json.loads(result_path.read_text())
        tail = _tail(log_path)
        how = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit code {rc}"
        return {
            "status": "rejected",
            "correct": False,
            "reason": "crash",
            "detail": f"worker process died ({how}){': ' + tail if tail else ''}",
        }


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text[-lines:])[-400:]
