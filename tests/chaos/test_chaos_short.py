"""The chaos suite, small: bench/chaos.py with 30 pods, every component SIGKILLed once mid-rollout.

It is the real thing (three etcd members, API server, controller-manager, scheduler, two kubelets
as processes), only smaller than `bench/chaos.py`'s default 500 pods. The script checks the
invariants continuously and prints them; here we hold it to them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.etcd import etcd_binary

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(400)
def test_killing_each_component_once_mid_rollout_breaks_no_invariant() -> None:
    etcd_binary()  # skip (or fail under REQUIRE_ETCD=1) without etcd
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "chaos.py"), "--pods", "30", "--backend", "etcd", "--timeout", "120",
         "--lease-duration", "2"],
        capture_output=True, text=True, timeout=380, cwd=REPO,
    )
    report = json.loads(done.stdout)
    assert "error" not in report, json.dumps(report, indent=2)
    killed = [k["component"] for k in report["kills"]]
    assert killed == ["apiserver", "controller-manager", "scheduler", "kubelet", "etcd"]
    assert report["rollouts_completed"] == 6
    assert report["surge_violations"] == [] and report["max_active"] <= report["limit_active"]
    assert report["acknowledged_writes"] > 0 and report["lost_acknowledged_writes"] == []
    assert report["ok"] is True and done.returncode == 0
