"""`edit`, side by side with the real kubectl: each edits its own twin Deployment through a
scripted $KUBE_EDITOR that records every file it is shown and changes it with sed.

Compared: what is printed, the exit code, the stored result, and the file a refused edit is
reopened with (kubectl's header plus the server's reasons).
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from tests.kubectl.conftest import Pair, Result

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata: {name: NAME}
spec:
  replicas: 2
  selector: {matchLabels: {app: NAME}}
  template:
    metadata: {labels: {app: NAME}}
    spec: {containers: [{name: app, image: nginx:1.25}]}
"""


def _editor(tmp_path: Path, who: str, sed: str) -> dict[str, str]:
    """A KUBE_EDITOR that keeps a copy of each file it gets (shown-0, shown-1, ...) then runs sed."""
    rounds = tmp_path / f"rounds-{who}"
    rounds.mkdir(exist_ok=True)
    for old in rounds.iterdir():
        old.unlink()
    script = tmp_path / f"editor-{who}.sh"
    script.write_text(f'#!/bin/sh\nn=$(ls {rounds} | wc -l)\ncp "$1" {rounds}/shown-$n\nsed -i \'{sed}\' "$1"\n')
    script.chmod(0o755)
    return {"KUBE_EDITOR": str(script), "TMPDIR": str(tmp_path)}  # the copies an edit keeps land here, not in /tmp


def _edit(pair: Pair, tmp_path: Path, ns: str, sed: str, *extra: str) -> tuple[Result, Result]:
    real = pair.real("edit", "-n", ns, "deploy/ed-real", *extra, env=_editor(tmp_path, "real", sed))
    mini = pair.mini("edit", "-n", ns, "deploy/ed-mini", *extra, env=_editor(tmp_path, "mini", sed))
    return real, mini


def _same(real: Result, mini: Result) -> None:
    def norm(text: str) -> str:
        text = re.sub(r'"[^"]*/kubectl-edit-[^"]+\.yaml"', '"FILE"', text)
        return text.replace("ed-mini", "ed-real")

    assert (mini.rc, norm(mini.out), norm(mini.err)) == (real.rc, norm(real.out), norm(real.err))


def test_edit_patches_what_was_changed_and_reopens_a_refused_edit(
    pair: Pair, api: httpx.Client, ns: str, tmp_path: Path
) -> None:
    for name in ("ed-real", "ed-mini"):
        r = api.post(f"/apis/apps/v1/namespaces/{ns}/deployments",
                     content=DEPLOY.replace("NAME", name), headers={"Content-Type": "application/yaml"})
        assert r.status_code == 201, r.text

    real, mini = _edit(pair, tmp_path, ns, "s/replicas: 2/replicas: 3/")
    _same(real, mini)
    assert real.out == "deployment.apps/ed-real edited\n"
    shown = (tmp_path / "rounds-mini" / "shown-0").read_text()
    assert shown.startswith("# Please edit the object below.") and "managedFields" not in shown
    for name in ("ed-real", "ed-mini"):
        assert api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{name}").json()["spec"]["replicas"] == 3

    _same(*_edit(pair, tmp_path, ns, "s/no such text//"))  # Edit cancelled, no changes made.

    real, mini = _edit(pair, tmp_path, ns, "s/replicas: 3/replicas: -1/")  # refused, reopened, left as is
    _same(real, mini)
    assert real.rc == 1 and "error: Edit cancelled, no valid changes were saved." in real.err
    reopened = [(tmp_path / f"rounds-{who}" / "shown-1").read_text().replace("ed-mini", "ed-real")
                for who in ("real", "mini")]
    assert reopened[1].split("apiVersion:")[0] == reopened[0].split("apiVersion:")[0]
    assert '# deployments.apps "ed-real" was not valid:\n# * spec.replicas: Invalid value: -1' in reopened[0]

    _same(*_edit(pair, tmp_path, ns, "s/name: ed-[a-z]*$/name: renamed/"))  # identity changed
    for name in ("ed-real", "ed-mini"):
        assert api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{name}").json()["spec"]["replicas"] == 3
