"""`mini-k8s up` picks the process runtime by itself where it can work, and says which it chose."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import cluster.up
from cluster import runtime_choice
from cluster.main import app
from cluster.plan import ClusterOptions
from tests.support.component import free_port


def _up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *flags: str) -> tuple[ClusterOptions, str]:
    seen: list[ClusterOptions] = []

    async def keep(opts: ClusterOptions, **_kwargs: object) -> int:
        seen.append(opts)
        return 0

    monkeypatch.setattr(cluster.up, "run_up", keep)
    ports = ["--port", str(free_port()), "--controller-manager-port", str(free_port()), "--scheduler-port",
             str(free_port()), "--kubelet-port", str(free_port()), "--dns-port", "0", "--metrics-server-port", "0",
             "--kube-proxy-port", "0"]  # fmt: skip
    result = CliRunner().invoke(app, ["up", "--data-dir", str(tmp_path / "data"), *ports, *flags])
    assert result.exit_code == 0, result.output
    return seen[0], result.output


def test_without_root_up_runs_the_simulated_runtime_and_says_how_to_get_real_pods(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runtime_choice.os, "geteuid", lambda: 1000)
    opts, output = _up(tmp_path, monkeypatch)
    assert opts.runtime == "simulated"
    (sentence,) = [line for line in output.splitlines() if line.startswith("Runtime:")]
    assert sentence == ("Runtime: simulated: pods run no processes, because it is not running as root; for real "
                        "pods run `sudo .venv/bin/mini-k8s up` on Linux (with nsenter and nft installed).")  # fmt: skip


@pytest.mark.skipif(sys.platform != "linux", reason="the process runtime is Linux's")
def test_as_root_with_the_programs_up_runs_real_pods(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime_choice.os, "geteuid", lambda: 0)
    monkeypatch.setattr(runtime_choice.shutil, "which", lambda name: f"/usr/bin/{name}")
    opts, output = _up(tmp_path, monkeypatch)
    assert opts.runtime == "process"
    assert "Runtime: process: pods are real processes, since this is Linux and we are root" in output


def test_a_missing_program_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime_choice.sys, "platform", "linux")
    monkeypatch.setattr(runtime_choice.os, "geteuid", lambda: 0)
    found = shutil.which("sh")
    monkeypatch.setattr(runtime_choice.shutil, "which", lambda name: None if name == "nft" else found)
    runtime, sentence = runtime_choice.choose_runtime("auto")
    assert runtime == "simulated" and "because nft is not installed" in sentence


def test_an_explicit_runtime_is_kept_and_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime_choice.os, "geteuid", lambda: 0)
    opts, output = _up(tmp_path, monkeypatch, "--runtime", "simulated")
    assert opts.runtime == "simulated"
    assert "Runtime: simulated (--runtime simulated): pods run no processes." in output


def test_an_unknown_runtime_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["up", "--data-dir", str(tmp_path / "d"), "--runtime", "docker"])
    assert result.exit_code == 1
    assert "invalid --runtime 'docker': must be auto, simulated or process" in result.output
