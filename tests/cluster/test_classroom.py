"""The classroom preset (cluster/classroom.py): what `mini-k8s up --classroom` hands each component,
and that a flag the user gives wins over it. `up` runs here without starting anything: its last
step, cluster.up.run_up, is replaced by one that keeps the options it was given."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import cluster.up
from cluster.classroom import CLASSROOM, apiserver_args_with_preset, controller_manager_args_with_preset
from cluster.main import app
from cluster.plan import ClusterOptions, plan
from tests.support.component import free_port

HPA_SYNC = "--horizontal-pod-autoscaler-sync-period"
HPA_DOWNSCALE = "--horizontal-pod-autoscaler-downscale-stabilization"


def test_each_preset_flag_comes_first_unless_the_user_gave_it_in_any_spelling() -> None:
    assert controller_manager_args_with_preset([], CLASSROOM) == [f"{HPA_SYNC}=5s", f"{HPA_DOWNSCALE}=30s"]
    assert controller_manager_args_with_preset([f"{HPA_SYNC}=15s", "--v=2"], CLASSROOM) == [
        f"{HPA_DOWNSCALE}=30s", f"{HPA_SYNC}=15s", "--v=2"]  # fmt: skip
    assert controller_manager_args_with_preset([f"--concurrent-gc-syncs 2 {HPA_DOWNSCALE} 1m"], CLASSROOM) == [
        f"{HPA_SYNC}=5s", f"--concurrent-gc-syncs 2 {HPA_DOWNSCALE} 1m"]  # fmt: skip
    assert apiserver_args_with_preset([], CLASSROOM) == ["--watch-cache-size=100"]
    assert apiserver_args_with_preset(["--watch-cache-size=5"], CLASSROOM) == ["--watch-cache-size=5"]


def _up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *flags: str) -> ClusterOptions:
    seen: list[ClusterOptions] = []

    async def keep(opts: ClusterOptions, **_kwargs: object) -> int:
        seen.append(opts)
        return 0

    monkeypatch.setattr(cluster.up, "run_up", keep)
    ports = [
        "--port", str(free_port()), "--controller-manager-port", str(free_port()),
        "--scheduler-port", str(free_port()), "--kubelet-port", str(free_port()), "--dns-port", "0",
        "--metrics-server-port", str(free_port()),
    ]  # fmt: skip
    runtime = [] if "--runtime" in flags else ["--runtime", "simulated"]  # not root's automatic process runtime
    result = CliRunner().invoke(app, ["up", "--data-dir", str(tmp_path / "data"), *ports, *runtime, *flags])
    assert result.exit_code == 0, result.output
    return seen[0]


def _component_args(opts: ClusterOptions, kind: str) -> tuple[str, ...]:
    return next(c.args for c in plan(opts) if c.kind == kind)


def test_up_classroom_gives_the_hpa_and_metrics_server_the_preset_timings(tmp_path, monkeypatch) -> None:
    opts = _up(tmp_path, monkeypatch, "--classroom")
    cm = _component_args(opts, "controller-manager")
    assert cm[-2:] == (f"{HPA_SYNC}=5s", f"{HPA_DOWNSCALE}=30s")
    ms = _component_args(opts, "metrics-server")
    assert ms[ms.index("--metric-resolution") + 1] == "5s"
    assert opts.node_monitor_grace_period == "10s" and opts.apiserver_args == ["--watch-cache-size=100"]


def test_flags_the_user_gives_win_over_the_preset(tmp_path, monkeypatch) -> None:
    opts = _up(tmp_path, monkeypatch, "--classroom", "--metric-resolution", "15s",
               f"--kube-controller-manager-arg={HPA_SYNC}=15s")  # fmt: skip
    cm = _component_args(opts, "controller-manager")
    assert [a for a in cm if a.startswith("--horizontal")] == [f"{HPA_DOWNSCALE}=30s", f"{HPA_SYNC}=15s"]
    assert opts.metric_resolution == "15s"


def test_without_the_preset_kubernetes_timings_stay(tmp_path, monkeypatch) -> None:
    opts = _up(tmp_path, monkeypatch)
    assert not any(a.startswith("--horizontal") for a in _component_args(opts, "controller-manager"))
    assert opts.metric_resolution == "15s" and opts.apiserver_args == []
