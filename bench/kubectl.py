"""mini-kubectl against the real kubectl: wall and CPU time of whole commands, in the same run.

Run: `.venv/bin/python bench/kubectl.py [--runs 11]`. Prints one JSON document. It starts its own
`mini-apiserver` (embedded store in a temp dir), creates 50 pods, and runs each command `--runs`
times with each binary, alternating, against that server:

    get pods            the table of 50 pods
    get pods -o yaml    the 50 objects
    describe pod        one pod
    apply -f            one Deployment manifest from examples/ (unchanged after the first run)

For each it reports the median wall time and the median CPU time (user + system of the child
process) in milliseconds, and the ratio mini/real of the medians. The goal is a ratio of at most 3.
CPU time is the steadier number on a busy machine: wall time includes waiting for a core.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from tests.support.apiserver import APIServerProcess  # noqa: E402

MANIFEST = ROOT / "examples" / "nginx-deployment.yaml"


def _pod(i: int) -> dict[str, Any]:
    return {
        "metadata": {"name": f"bench-{i:02d}", "labels": {"app": "bench"}},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]},
    }


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall ms, cpu ms) of one child process, which must succeed."""
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv)} failed with {os.waitstatus_to_exitcode(status)}")
    return wall * 1e3, (usage.ru_utime + usage.ru_stime) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--kubectl", default=shutil.which("kubectl") or "/usr/bin/kubectl")
    opts = parser.parse_args()
    server = APIServerProcess().start()
    home = Path(tempfile.mkdtemp(prefix="bench-kubectl-"))
    try:
        kubeconfig = home / "config"
        kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\n"
            f"clusters:\n- name: b\n  cluster:\n    server: {server.url}\n"
            "users:\n- name: b\n  user: {}\n"
            "contexts:\n- name: b\n  context:\n    cluster: b\n    user: b\n"
            "current-context: b\n"
        )
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "KUBECONFIG": str(kubeconfig)}
        env["PYTHONPATH"] = str(ROOT)
        with httpx.Client(base_url=server.url, trust_env=False) as api:
            for i in range(50):
                api.post("/api/v1/namespaces/default/pods", json=_pod(i)).raise_for_status()
        binaries = {"real": [opts.kubectl], "mini": [sys.executable, "-m", "kubectl"]}
        commands = {
            "get pods": ["get", "pods"],
            "get pods -o yaml": ["get", "pods", "-o", "yaml"],
            "describe pod": ["describe", "pod", "bench-07"],
            "apply -f": ["apply", "-f", str(MANIFEST)],
        }
        results: dict[str, Any] = {}
        for label, args in commands.items():
            samples: dict[str, list[tuple[float, float]]] = {"real": [], "mini": []}
            for _ in range(opts.runs):
                for which, argv in binaries.items():
                    samples[which].append(_timed([*argv, *args], env))
            entry: dict[str, Any] = {}
            for which, runs in samples.items():
                entry[which] = {
                    "median_wall_ms": round(statistics.median(w for w, _ in runs), 1),
                    "median_cpu_ms": round(statistics.median(c for _, c in runs), 1),
                }
            entry["ratio_wall"] = round(entry["mini"]["median_wall_ms"] / entry["real"]["median_wall_ms"], 2)
            entry["ratio_cpu"] = round(entry["mini"]["median_cpu_ms"] / entry["real"]["median_cpu_ms"], 2)
            results[label] = entry
        doc = {
            "benchmark": "kubectl",
            "runs": opts.runs,
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_1m": round(os.getloadavg()[0], 2),
            "results": results,
        }
        print(json.dumps(doc, indent=2))
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
