"""patch, wait, events, get --raw, get --sort-by and config view -o jsonpath, side by side with kubectl.

Twin objects (r-*, m-*) keep the two binaries from changing each other's object; outputs are
compared with the twin's name swapped back.
"""

from __future__ import annotations

import subprocess
import threading
from datetime import UTC, datetime

import httpx

from tests.kubectl.conftest import REPO, Pair, cells
from tests.support.component import wait_for


def _twins(pair: Pair, ns: str) -> None:
    for name in ("r-web", "m-web"):
        assert pair.real("create", "deployment", name, "--image=nginx", "-n", ns).rc == 0


def _same(pair: Pair, ns: str, *args: str) -> None:
    real = pair.real(*[a.replace("WEB", "r-web") for a in args], "-n", ns)
    mini = pair.mini(*[a.replace("WEB", "m-web") for a in args], "-n", ns)
    swap = lambda t: t.replace("r-web", "WEB").replace("m-web", "WEB")  # noqa: E731
    assert (mini.rc, swap(mini.out), swap(mini.err)) == (real.rc, swap(real.out), swap(real.err)), args


def test_patch_types_dry_run_and_errors(pair: Pair, api: httpx.Client, ns: str) -> None:
    _twins(pair, ns)
    for args in (
        ("patch", "deploy", "WEB", "-p", '{"spec":{"replicas":2}}'),
        ("patch", "deploy", "WEB", "-p", '{"spec":{"replicas":2}}'),  # (no change)
        ("patch", "deploy/WEB", "--type=merge", "-p", "spec: {replicas: 3}"),
        ("patch", "deploy", "WEB", "--type=json", "-p", '[{"op":"replace","path":"/spec/replicas","value":4}]'),
        ("patch", "deploy", "WEB", "--type=json", "-p", '{"not":"a list"}'),
        ("patch", "deploy", "WEB", "-p", '{"spec":{"replicas":9}}', "--dry-run=server"),
        ("patch", "deploy", "WEB", "-p", '{"spec":{"replicas":9}}', "--dry-run=client"),
        ("patch", "deploy", "WEB", "-p", '{"spec":{"replicas":"x"}}'),
        ("patch", "deploy", "WEB", "--type=bogus", "-p", "{}"),
        ("patch", "deploy", "nope", "-p", "{}"),
        ("patch", "deploy", "WEB", "-p", '{"spec":{"replicas":5}}', "-o", "jsonpath={.spec.replicas}"),
    ):
        _same(pair, ns, *args)
    for name in ("r-web", "m-web"):
        assert api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{name}").json()["spec"]["replicas"] == 5


def test_wait_for_condition_jsonpath_and_delete(pair: Pair, api: httpx.Client, ns: str) -> None:
    _twins(pair, ns)
    for args in (
        ("wait", "--for=jsonpath={.spec.replicas}=1", "deploy/WEB"),
        ("wait", "--for=jsonpath={.spec.replicas}", "deploy", "WEB"),
        ("wait", "--for=condition=Available", "deploy/WEB", "--timeout=1s"),
        ("wait", "--for=delete", "pod/nope", "--timeout=1s"),
        ("wait", "--for=condition=Ready", "pod/nope", "--timeout=1s"),
        ("wait", "--for=bogus", "deploy/WEB"),
    ):
        _same(pair, ns, *args)
    # A wait that is met while it watches: the replicas change after it started.
    result: dict[str, object] = {}
    waiter = threading.Thread(
        target=lambda: result.update(
            r=pair.mini("wait", "--for=jsonpath={.spec.replicas}=4", "deploy/m-web", "--timeout=60s", "-n", ns)
        )
    )
    waiter.start()
    patch = {"spec": {"replicas": 4}}
    headers = {"Content-Type": "application/merge-patch+json"}
    assert api.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/m-web", json=patch, headers=headers).is_success
    waiter.join(90)
    r = result["r"]
    assert (r.rc, r.out) == (0, "deployment.apps/m-web condition met\n")  # type: ignore[attr-defined]


def test_events_table_filters_and_empty(pair: Pair, api: httpx.Client, ns: str) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for i, kind in ((1, "Normal"), (2, "Warning")):
        ev = {
            "metadata": {"name": f"ev{i}"},
            "involvedObject": {"kind": "Pod", "name": f"web-{i}", "namespace": ns, "apiVersion": "v1"},
            "reason": "Scheduled",
            "message": f"Successfully assigned {ns}/web-{i} to node-1 ",
            "type": kind,
            "count": i,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "source": {"component": "default-scheduler"},
        }
        assert api.post(f"/api/v1/namespaces/{ns}/events", json=ev).status_code == 201
    for args in (("events",), ("events", "--types=Warning"), ("events", "--for", "pod/web-1"), ("events", "-A")):
        real, mini = pair.both(*args, "-n", ns)
        assert (mini.rc, mini.err) == (real.rc, real.err), args
        if args[-1] == "-A":  # other tests' events may be there too: compare this namespace's rows
            assert [c for c in cells(mini.out) if c[0] == ns] == [c for c in cells(real.out) if c[0] == ns]
        else:
            assert cells(mini.out) == cells(real.out), args
    for args in (("events", "-n", "kube-node-lease"), ("events", "--types=bogus")):
        real, mini = pair.both(*args)
        assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err), args


def test_get_raw_sort_by_and_config_view_jsonpath(pair: Pair, api: httpx.Client, ns: str) -> None:
    for i, value in ((3, "7"), (1, "9"), (2, "8")):
        body = {"metadata": {"name": f"c{i}"}, "data": {"k": value}}
        assert api.post(f"/api/v1/namespaces/{ns}/configmaps", json=body).status_code == 201
    for args in (
        ("get", "cm", "--sort-by=.metadata.name", "-n", ns),
        ("get", "cm", "--sort-by={.data.k}", "-n", ns),
        ("get", "cm", "--sort-by=.data.k", "-o", "name", "-n", ns),
    ):
        real, mini = pair.both(*args)
        assert (mini.rc, cells(mini.out), mini.err) == (real.rc, cells(real.out), real.err), args
    for args in (
        ("get", "--raw", f"/api/v1/namespaces/{ns}"),
        ("get", "--raw", "/healthz"),
        ("get", "--raw", "/nope"),
        ("config", "view", "-o", "jsonpath={.contexts[*].name}"),
        ("config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}"),
        ("config", "view", "--minify"),
        ("config", "view", "-o", "json"),
    ):
        real, mini = pair.both(*args)
        assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err), args


def test_help_shows_every_flag_in_full_at_80_columns(pair: Pair) -> None:
    from kubectl.main import VERBS

    root = pair.mini("--help", env={"COLUMNS": "80"})
    assert root.rc == 0
    for verb in sorted(VERBS):
        assert verb in root.out, verb
        out = pair.mini(verb, "--help", env={"COLUMNS": "80"}).out
        if verb in ("create", "config", "rollout", "top", "set"):
            continue  # groups: their sub-commands are listed instead of flags
        flags = {w.strip(",") for line in out.splitlines() for w in line.split() if w.startswith("--")}
        assert "--help" in flags, verb
        assert not any(f.endswith(("…", "...")) for f in flags), (verb, flags)
    out = pair.mini("get", "--help", env={"COLUMNS": "80"}).out
    for flag in ("--field-selector", "--all-namespaces", "--label-columns", "--sort-by", "--show-labels"):
        assert flag in out.split(), flag
    out = pair.mini("create", "deployment", "--help", env={"COLUMNS": "80"}).out
    for flag in ("--image", "--replicas", "--dry-run", "--output"):
        assert flag in out.split(), flag


def _event(ns: str, name: str, kind: str = "Normal") -> dict:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"metadata": {"name": name}, "type": kind, "reason": "Pulled", "message": f"image for {name}",
            "involvedObject": {"kind": "Pod", "name": name, "namespace": ns, "apiVersion": "v1"},
            "count": 1, "firstTimestamp": now, "lastTimestamp": now, "source": {"component": "kubelet"}}  # fmt: skip


def test_events_output_is_an_event_list(pair: Pair, api: httpx.Client, ns: str) -> None:
    for name in ("e1", "e2"):
        assert api.post(f"/api/v1/namespaces/{ns}/events", json=_event(ns, name)).status_code == 201
    for args in (("events", "-o", "yaml"), ("events", "-o", "json"), ("events", "-o", "name"),
                 ("events", "-o", "jsonpath={.kind} {.items[*].metadata.name}")):  # fmt: skip
        real, mini = pair.both(*args, "-n", ns)
        assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err), args


def _stream(pair: Pair, which: str, args: list[str]) -> tuple[subprocess.Popen[str], list[str]]:
    """Start `which` (real|mini) and collect its stdout lines as they come."""
    proc = subprocess.Popen(pair._cmd(which, tuple(args)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=pair.env, cwd=str(REPO))  # fmt: skip
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True).start()  # type: ignore[union-attr]
    return proc, lines


def test_events_watch_prints_what_exists_then_what_comes(pair: Pair, api: httpx.Client, ns: str) -> None:
    assert api.post(f"/api/v1/namespaces/{ns}/events", json=_event(ns, "before")).status_code == 201
    runs = {which: _stream(pair, which, ["events", "-w", "-n", ns]) for which in ("real", "mini")}
    try:
        for _proc, lines in runs.values():
            wait_for(lambda lines=lines: len(lines) >= 2, timeout=30, what="the header and the existing event")
        for name, kind in (("later", "Warning"), ("last", "Normal")):
            assert api.post(f"/api/v1/namespaces/{ns}/events", json=_event(ns, name, kind)).status_code == 201
        for _proc, lines in runs.values():
            wait_for(lambda lines=lines: len(lines) >= 4, timeout=30, what="the two new events")
    finally:
        for proc, _lines in runs.values():
            proc.terminate()
            proc.wait(10)
    real, mini = (runs[w][1] for w in ("real", "mini"))
    assert mini[0].split() == real[0].split()  # the header, printed once
    # LAST SEEN is an age taken when each binary printed the row: compare the rest
    assert [line.split()[1:] for line in mini[1:]] == [line.split()[1:] for line in real[1:]]
    assert mini[0].split()[:2] == ["LAST", "SEEN"] and "Pod/later" in mini[2] and "Pod/last" in mini[3]
