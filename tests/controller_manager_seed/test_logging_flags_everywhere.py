"""One habit for every component: the scheduler, the kubelet and the API server take the same
klog flags, spelled the pflag way, and write the same klog files; the controller-manager's other
seed-table flags do what the table says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.support.apiserver import APIServerProcess
from tests.support.component import REPO, ComponentProcess, free_port, wait_for

LOG_FLAGS = ["--logtostderr=false", "--v=4"]


def _info_file(log_dir: Path, program: str) -> str:
    link = log_dir / f"{program}.INFO"
    return wait_for(lambda: link.is_symlink() and link.read_text(), what=f"{program}.INFO")  # type: ignore[return-value]


@pytest.mark.parametrize("module,program", [("scheduler", "mini-scheduler"), ("kubelet", "mini-kubelet")])
def test_scheduler_and_kubelet_take_the_klog_flags(
    apiserver: APIServerProcess, tmp_path: Path, module: str, program: str
) -> None:
    port = free_port()
    master = apiserver.url.split("://", 1)[1]
    extra = ["--node-name", "klog-node"] if module == "kubelet" else []
    proc = ComponentProcess(
        module, [*LOG_FLAGS, f"--master={master}", f"--log_dir={tmp_path}", f"--port={port}", *extra], health_port=port
    ).start()
    try:
        text = _info_file(tmp_path, program)
        assert text.startswith("Log file created at: ")
        wait_for(lambda: "HTTP Request: GET " in (tmp_path / f"{program}.INFO").read_text(), what="-v=4 request lines")
        if module == "scheduler":  # --profiling is on by default, as in kube-scheduler
            dump = httpx.get(f"http://127.0.0.1:{port}/debug/pprof/goroutine", params={"debug": "2"}).text
            assert re.search(r'^task \d+ "scheduler-http" \[waiting\]:$', dump, re.M), dump[:1000]
    finally:
        proc.stop()
    assert "HTTP Request" not in proc.log_tail(200)  # files only: nothing below ERROR on stderr


def test_apiserver_takes_the_klog_flags(tmp_path: Path) -> None:
    server = APIServerProcess(args=["--logtostderr=false", "--v=4", f"--log_dir={tmp_path}"]).start()
    try:
        assert server.client().get("/api/v1/namespaces/default").status_code == 200
        assert _info_file(tmp_path, "mini-apiserver").startswith("Log file created at: ")
    finally:
        server.cleanup()


def test_unusable_log_dir_is_a_clear_error(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "controller_manager", "--logtostderr=false", f"--log_dir={tmp_path / 'missing'}"],
        capture_output=True, text=True, cwd=REPO, timeout=60,
    )  # fmt: skip
    assert res.returncode == 2
    assert "log: cannot create log" in res.stderr and "missing" in res.stderr


def test_bool_flag_with_a_non_boolean_value_is_refused() -> None:
    res = subprocess.run([sys.executable, "-m", "controller_manager", "--logtostderr=maybe"],
                         capture_output=True, text=True, cwd=REPO, timeout=60)  # fmt: skip
    assert res.returncode == 2 and "--logtostderr" in res.stderr


def test_security_controllers_say_why_they_do_not_run_and_profiling_can_be_off(apiserver: APIServerProcess) -> None:
    port = free_port()
    proc = ComponentProcess(
        "controller_manager",
        [f"--master={apiserver.url}", f"--port={port}", "--profiling=false", "--v=1",
         "--controller-start-interval=0.05s", "--cluster-name=seed",
         "--controllers=serviceaccount,serviceaccount-token,root-ca-cert-publisher,podgc"],
        health_port=port,
    ).start()  # fmt: skip
    try:
        assert httpx.get(f"http://127.0.0.1:{port}/debug/pprof/").status_code == 404
        started = "Started controller 'serviceaccount'"  # the last one, in registry order
        log = wait_for(lambda: started in (t := proc.log_tail(200)) and t, what="serviceaccount started")
        assert "controller 'serviceaccount-token' is disabled because there is no private key" in log
        assert "controller 'root-ca-cert-publisher' is disabled because there is no root CA" in log
        assert "Started controller 'podgc'" in log
        assert 'FLAG: --cluster-name="seed"' in log and 'FLAG: --controller-start-interval="0.05s"' in log
    finally:
        proc.stop()
