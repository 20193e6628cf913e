"""create / apply / replace / delete -f: kubectl's words, kubectl's merge, nothing created on bad input."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.kubectl.conftest import Pair

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx:1.25
        ports: [{containerPort: 80}]
      - name: sidecar
        image: busybox:1.36
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {html: "<b>&amp;</b>"}
"""


def test_apply_takes_turns_with_the_real_kubectl_on_one_object(
    pair: Pair, api: httpx.Client, ns: str, tmp_path: Path
) -> None:
    f = tmp_path / "web.yaml"
    f.write_text(DEPLOY)
    first = pair.mini("apply", "-n", ns, "-f", str(f))
    assert (first.rc, first.out) == (0, "deployment.apps/web created\nconfigmap/cfg created\n"), first.err
    # The last-applied annotation is byte-identical to kubectl's, so kubectl sees nothing to do...
    again = pair.real("apply", "-n", ns, "-f", str(f))
    assert again.out == "deployment.apps/web unchanged\nconfigmap/cfg unchanged\n"
    # ...and a change made by kubectl is "configured", then "unchanged" for mini-kubectl.
    f.write_text(DEPLOY.replace("replicas: 2", "replicas: 3"))
    assert pair.real("apply", "-n", ns, "-f", str(f)).out.startswith("deployment.apps/web configured")
    assert (
        pair.mini("apply", "-n", ns, "-f", str(f)).out
        == "deployment.apps/web unchanged\nconfigmap/cfg unchanged\n"
    )
    # mini-kubectl changes one container's image and drops a label: a strategic merge keeps the sidecar.
    f.write_text(
        DEPLOY.replace("replicas: 2", "replicas: 3")
        .replace("nginx:1.25", "nginx:1.26")
        .replace("  labels: {app: web}\n", "", 1)
    )
    r = pair.mini("apply", "-n", ns, "-f", str(f))
    assert r.out == "deployment.apps/web configured\nconfigmap/cfg unchanged\n", r.err
    live = api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web").json()
    assert [c["image"] for c in live["spec"]["template"]["spec"]["containers"]] == [
        "nginx:1.26",
        "busybox:1.36",
    ]
    assert live["spec"]["replicas"] == 3 and "labels" not in live["metadata"]
    assert pair.real("apply", "-n", ns, "-f", str(f)).out.startswith("deployment.apps/web unchanged")
    # create on existing objects: AlreadyExists naming the file, exit 1; replace and delete -f.
    real, mini = pair.real("create", "-n", ns, "-f", str(f)), pair.mini("create", "-n", ns, "-f", str(f))
    assert (mini.rc, mini.err) == (real.rc, real.err) == (1, real.err)
    assert mini.err.startswith(
        f'Error from server (AlreadyExists): error when creating "{f}": deployments.apps'
    )
    assert (
        pair.mini("replace", "-n", ns, "-f", str(f)).out
        == "deployment.apps/web replaced\nconfigmap/cfg replaced\n"
    )
    assert (
        pair.mini("delete", "-n", ns, "-f", str(f)).out
        == 'deployment.apps "web" deleted\nconfigmap "cfg" deleted\n'
    )
    real, mini = pair.real("delete", "-n", ns, "-f", str(f)), pair.mini("delete", "-n", ns, "-f", str(f))
    assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err) and mini.rc == 1


def test_directories_stdin_and_delete_by_name_label_and_all(
    pair: Pair, api: httpx.Client, ns: str, tmp_path: Path
) -> None:
    d = tmp_path / "dir"
    d.mkdir()
    for i in (1, 2):
        (d / f"p{i}.yaml").write_text(
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, labels: {{g: x}}}}\n"
            "spec: {containers: [{name: c, image: nginx}]}\n"
        )
    (d / "notes.txt").write_text("not a manifest")
    assert pair.mini("create", "-n", ns, "-f", str(d)).out == "pod/p1 created\npod/p2 created\n"
    stdin = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {n}}}\n" for n in "ab")
    assert (
        pair.mini("apply", "-n", ns, "-f", "-", stdin=stdin).out
        == "configmap/a created\nconfigmap/b created\n"
    )
    assert pair.mini("delete", "-n", ns, "pods", "-l", "g=x").out == 'pod "p1" deleted\npod "p2" deleted\n'
    assert (
        pair.mini("delete", "-n", ns, "cm", "a", "--cascade=orphan", "--wait=false").out
        == 'configmap "a" deleted\n'
    )
    # (no garbage collector runs here, so the orphaned configmap keeps its finalizer: --wait=false)
    assert 'configmap "b" deleted' in pair.mini("delete", "-n", ns, "cm", "b").out
    real, mini = (
        pair.real("delete", "-n", ns, "pods", "--all"),
        pair.mini("delete", "-n", ns, "pods", "--all"),
    )
    assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err)
    real, mini = pair.real("delete", "-n", ns, "pod", "gone"), pair.mini("delete", "-n", ns, "pod", "gone")
    assert (
        (mini.rc, mini.err)
        == (real.rc, real.err)
        == (1, 'Error from server (NotFound): pods "gone" not found\n')
    )


BAD_INPUTS = {
    "syntax.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n   b: c\n",
    "unknown.yaml": "apiVersion: v1\nkind: Foo\nmetadata:\n  name: x\n",
    "nokind.yaml": "apiVersion: v1\nmetadata:\n  name: x\n",
    "nothing.yaml": "metadata:\n  name: x\n",
    "tab.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: x\n",
}


def test_bad_input_fails_with_kubectls_words_and_creates_nothing(
    pair: Pair, api: httpx.Client, ns: str, tmp_path: Path
) -> None:
    good = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good}\n---\n"
    for name, text in BAD_INPUTS.items():
        (tmp_path / name).write_text(good + text)
        (tmp_path / f"only-{name}").write_text(text)
    # (kubectl's `create` streams: it would create "good" before failing, so it gets the bad document alone)
    cases = [("apply", str(tmp_path / name)) for name in BAD_INPUTS]
    cases += [("create", str(tmp_path / f"only-{name}")) for name in BAD_INPUTS]
    cases.append(("apply", str(tmp_path / "nope.yaml")))
    real_ns = ns + "-real"  # kubectl's `create` may create the good document first; keep it apart
    api.post("/api/v1/namespaces", json={"metadata": {"name": real_ns}})
    for verb, path in cases:
        real = pair.real(verb, "-n", real_ns, "-f", path)
        mini = pair.mini(verb, "-n", ns, "-f", path)
        assert mini.rc == real.rc == 1, (verb, path, real.err, mini.err)
        assert mini.err == real.err, (verb, path)
        assert mini.out == ""
    # mini-kubectl reads and checks every document first: nothing was created, not even the good one.
    assert api.get(f"/api/v1/namespaces/{ns}/configmaps").json()["items"] == []


def test_a_refused_create_says_creating(pair: Pair, api: httpx.Client, ns: str) -> None:
    limits = {"metadata": {"name": "max"}, "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]}}
    assert api.post(f"/api/v1/namespaces/{ns}/limitranges", json=limits).status_code == 201
    pod = (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: big, namespace: {ns}}}\n"
           "spec: {containers: [{name: app, image: nginx, resources: {limits: {cpu: '2'}}}]}\n")  # fmt: skip
    real, mini = pair.real("apply", "-f", "-", stdin=pod), pair.mini("apply", "-f", "-", stdin=pod)
    assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err)
    assert 'error when creating "STDIN": pods "big" is forbidden: maximum cpu usage per Container is 1' in real.err
