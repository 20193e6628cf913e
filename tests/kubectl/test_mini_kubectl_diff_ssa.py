"""`diff -f` and `apply --server-side`, side by side with the real kubectl on one server.

diff is read-only, so both run against the same objects and must print the same unified diff
(temporary directory names and file times aside) with the same exit code, and leave every stored
object byte-identical. Server-side apply changes objects, so each tool gets its own twin.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from tests.kubectl.conftest import Pair, Result

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: NAME
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx:1.25
"""


def _normal(text: str) -> str:
    text = re.sub(r"/(LIVE|MERGED)-[^/\s]+/", r"/\1/", text)
    text = re.sub(r"^(---|\+\+\+) (\S+)\t.*$", r"\1 \2", text, flags=re.M)
    # A dry-run create gets a fresh uid and timestamp each time.
    return re.sub(r"^\+  (uid|creationTimestamp): .*$", r"+  \1: X", text, flags=re.M)


def _same_diff(pair: Pair, ns: str, *args: str) -> Result:
    real, mini = pair.real("diff", "-n", ns, *args), pair.mini("diff", "-n", ns, *args)
    assert (mini.rc, _normal(mini.out), mini.err) == (real.rc, _normal(real.out), real.err), (args, mini, real)
    return real


def _stored(api: httpx.Client, ns: str) -> list[bytes]:
    return [api.get(f"/apis/apps/v1/namespaces/{ns}/deployments").content,
            api.get(f"/api/v1/namespaces/{ns}/secrets").content]


def test_diff_prints_what_apply_would_change_and_changes_nothing(
    pair: Pair, api: httpx.Client, ns: str, tmp_path: Path
) -> None:
    f = tmp_path / "web.yaml"
    f.write_text(DEPLOY.replace("NAME", "web"))
    new = _same_diff(pair, ns, "-f", str(f))  # not there yet: all of it is new
    assert new.rc == 1 and "+  replicas: 2" in new.out
    assert pair.real("apply", "-n", ns, "-f", str(f)).rc == 0
    assert _same_diff(pair, ns, "-f", str(f)).out == ""  # applied: nothing to show, exit 0

    f.write_text(DEPLOY.replace("NAME", "web").replace("replicas: 2", "replicas: 3").replace("1.25", "1.26"))
    secret = tmp_path / "s.yaml"
    secret.write_text("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {a: YQ==, b: Yg==}\n")
    assert pair.real("apply", "-n", ns, "-f", str(secret)).rc == 0
    secret.write_text("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {a: YQ==, b: Yw==, c: Yw==}\n")
    before = _stored(api, ns)
    changed = _same_diff(pair, ns, "-f", str(f), "-f", str(secret))
    assert changed.rc == 1
    assert "-  replicas: 2\n+  replicas: 3\n" in changed.out
    assert "-  b: '*** (before)'\n+  b: '*** (after)'\n+  c: '***'\n" in changed.out  # values never shown
    assert "managedFields" not in changed.out
    assert _same_diff(pair, ns, "--server-side", "-f", str(f)).rc == 1
    assert _stored(api, ns) == before  # every diff was a dry run

    bad = tmp_path / "bad.yaml"
    bad.write_text(DEPLOY.replace("NAME", "web").replace("replicas: 2", "replicas: -1"))
    invalid = _same_diff(pair, ns, "-f", str(bad))
    assert invalid.rc == 2 and "is invalid" in invalid.err


def test_server_side_apply_owns_fields_and_reports_conflicts_as_kubectl_does(
    pair: Pair, api: httpx.Client, ns: str, tmp_path: Path
) -> None:
    for who, name in (("real", "ssa-real"), ("mini", "ssa-mini")):
        f = tmp_path / f"{name}.yaml"
        f.write_text(DEPLOY.replace("NAME", name))
        run = pair.real if who == "real" else pair.mini
        created = run("apply", "--server-side", "-n", ns, "-f", str(f))
        assert (created.rc, created.out) == (0, f"deployment.apps/{name} serverside-applied\n"), created
        managers = [m["manager"] for m in
                    api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{name}").json()["metadata"]["managedFields"]]
        assert managers == ["kubectl"]
        assert run("scale", "-n", ns, f"deploy/{name}", "--replicas=5").rc == 0
        f.write_text(DEPLOY.replace("NAME", name).replace("replicas: 2", "replicas: 3"))

    def both(*args: str) -> tuple[Result, Result]:
        real = pair.real(*[a.replace("NAME", "ssa-real") for a in args])
        mini = pair.mini(*[a.replace("NAME", "ssa-mini") for a in args])
        return real, mini

    for args in (
        ("apply", "--server-side", "-n", ns, "-f", str(tmp_path / "NAME.yaml")),  # conflict with the scale
        ("apply", "--server-side", "--dry-run=client", "-n", ns, "-f", str(tmp_path / "NAME.yaml")),
        ("apply", "--server-side", "--force-conflicts", "--dry-run=server", "-n", ns, "-f",
         str(tmp_path / "NAME.yaml")),
        ("apply", "--server-side", "--force-conflicts", "-n", ns, "-f", str(tmp_path / "NAME.yaml")),
    ):
        real, mini = both(*args)
        # The scale's manager is named after each tool's User-Agent: "kubectl" or "mini-kubectl".
        mini_err = mini.err.replace("ssa-mini", "ssa-real").replace('"mini-kubectl"', '"kubectl"')
        assert (mini.rc, mini.out.replace("ssa-mini", "ssa-real"), mini_err) == (real.rc, real.out, real.err), args
        if args[1:3] == ("--server-side", "-n"):
            assert 'Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale"' in real.err
    for name in ("ssa-real", "ssa-mini"):
        assert api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{name}").json()["spec"]["replicas"] == 3
