"""`create <generator>`, `--dry-run=client|server` and `create -f` errors, side by side with kubectl.

For each generator both binaries print `--dry-run=client -o yaml` (the manifest kubectl would
send) and the texts must be identical; then each creates its own copy on the server and the two
stored objects must agree apart from what the server assigns (uid, timestamps, names).
"""

from __future__ import annotations

import json

import httpx
import pytest

from tests.kubectl.conftest import REPO, Pair

EX = str(REPO / "tests" / "kubectl" / "data")  # test inputs; the TLS pair is a throw-away self-signed one

# (generator args with NAME as a placeholder, API path of the collection with {ns})
CORE, APPS, BATCH = "/api/v1/namespaces/{ns}", "/apis/apps/v1/namespaces/{ns}", "/apis/batch/v1/namespaces/{ns}"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
GENERATORS = [
    ("deployment NAME --image=nginx:1.25 --image=busybox --replicas=3 --port=80", APPS + "/deployments"),
    ("deploy NAME --image=my.reg:5000/team/busybox:1.36 -- sleep 10", APPS + "/deployments"),
    ("service clusterip NAME --tcp=80:8080 --tcp=443:https", CORE + "/services"),
    ("service nodeport NAME --tcp=80:8080", CORE + "/services"),
    ("service loadbalancer NAME --tcp=80", CORE + "/services"),
    ("service externalname NAME --external-name=example.com", CORE + "/services"),
    ("service clusterip NAME --clusterip=None", CORE + "/services"),
    (
        f"configmap NAME --from-literal=a=1 --from-file={EX}/greeting.txt --from-file=g={EX}/greeting.txt",
        CORE + "/configmaps",
    ),
    (f"configmap NAME --from-env-file={EX}/app.env", CORE + "/configmaps"),
    (f"secret generic NAME --from-literal=a=1 --from-file={EX}/greeting.txt --type=Opaque", CORE + "/secrets"),
    (f"secret tls NAME --cert={EX}/tls.crt --key={EX}/tls.key", CORE + "/secrets"),
    (
        "secret docker-registry NAME --docker-server=r.io --docker-username=u --docker-password=p --docker-email=e@x",
        CORE + "/secrets",
    ),
    ("job NAME --image=busybox -- echo hi", BATCH + "/jobs"),
    ("cronjob NAME --image=busybox --schedule=*/5_*_*_*_* -- date", BATCH + "/cronjobs"),
    (
        "role NAME --verb=get,list --verb=watch --resource=pods,deployments.apps --resource=pods/log",
        RBAC + "/namespaces/{ns}/roles",
    ),
    (
        "rolebinding NAME --role=r --user=u1 --group=g1 --serviceaccount=default:sa1",
        RBAC + "/namespaces/{ns}/rolebindings",
    ),
    ("rolebinding NAME --clusterrole=view --user=u1", RBAC + "/namespaces/{ns}/rolebindings"),
    ("clusterrole NAME --verb=get --resource=nodes --non-resource-url=/healthz", RBAC + "/clusterroles"),
    ("clusterrolebinding NAME --clusterrole=view --user=u1 --serviceaccount=ns:sa", RBAC + "/clusterrolebindings"),
    ("quota NAME --hard=cpu=1,memory=1G,pods=2 --scopes=BestEffort", CORE + "/resourcequotas"),
    ("serviceaccount NAME", CORE + "/serviceaccounts"),
    ("namespace NAME", "/api/v1/namespaces"),
]

# Kinds the server may not serve yet, and a fixed node port: compared as --dry-run=client output only.
PRINT_ONLY = [
    "service nodeport NAME --tcp=80:8080 --node-port=30123",
    "priorityclass NAME --value=1000 --description=hi --global-default=false --preemption-policy=Never",
    "priorityclass NAME --value=5",
    "poddisruptionbudget NAME --selector=app=x --min-available=1",
    "pdb NAME --selector=app=x --max-unavailable=50%",
    "ingress NAME --rule=foo.com/bar=svc1:8080 --rule=x.com/*=svc2:http,tls=my-cert --class=nginx "
    "--default-backend=def:80 --annotation=a=b",
    "ingress NAME --rule=/path=svc:80",
]

_ASSIGNED = {"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"}
_ALLOCATED = {"clusterIP", "clusterIPs", "nodePort"}  # differ between the two objects by design


def _drop_allocated(value: object) -> object:
    if isinstance(value, dict):
        return {k: _drop_allocated(v) for k, v in value.items() if k not in _ALLOCATED or v == "None"}
    if isinstance(value, list):
        return [_drop_allocated(v) for v in value]
    return value


def _argv(template: str, name: str) -> list[str]:
    return [w.replace("_", " ") if "schedule" in w else w for w in template.replace("NAME", name).split()]


def _comparable(obj: dict, name: str) -> dict:
    """The stored object without what the server assigns, its own name replaced by NAME."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in _ASSIGNED}
    rest = {k: v for k, v in obj.items() if k not in ("metadata", "status")}
    text = json.dumps(_drop_allocated({"metadata": meta, **rest}))
    return json.loads(text.replace(name, "NAME").replace(obj["metadata"]["uid"], "UID"))


@pytest.mark.parametrize("template,path", GENERATORS, ids=[g[0].split(" NAME")[0] for g in GENERATORS])
def test_generator_prints_and_creates_what_kubectl_does(
    pair: Pair, api: httpx.Client, ns: str, template: str, path: str
) -> None:
    real, mini = pair.both("-n", ns, "create", "--dry-run=client", "-o", "yaml", *_argv(template, "twin"))
    assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err)
    assert real.rc == 0 and "kind:" in real.out
    r_name, m_name = f"r-{ns}", f"m-{ns}"
    real = pair.real("-n", ns, "create", *_argv(template, r_name))
    mini = pair.mini("-n", ns, "create", *_argv(template, m_name))
    assert (mini.rc, mini.out.replace(m_name, "X"), mini.err) == (real.rc, real.out.replace(r_name, "X"), real.err)
    coll = path.format(ns=ns)
    r_obj = api.get(f"{coll}/{r_name}").json()
    m_obj = api.get(f"{coll}/{m_name}").json()
    assert _comparable(m_obj, m_name) == _comparable(r_obj, r_name)
    # Creating it again fails in kubectl's words, the same exit code.
    real = pair.real("-n", ns, "create", *_argv(template, r_name))
    mini = pair.mini("-n", ns, "create", *_argv(template, m_name))
    assert (mini.rc, mini.err.replace(m_name, "X")) == (real.rc, real.err.replace(r_name, "X"))
    assert real.rc == 1
    if "namespaces" == coll.rsplit("/", 1)[-1] or "cluster" in coll:
        api.delete(f"{coll}/{r_name}")
        api.delete(f"{coll}/{m_name}")


@pytest.mark.parametrize("template", PRINT_ONLY, ids=[t.split(" NAME")[0] + str(i) for i, t in enumerate(PRINT_ONLY)])
def test_generator_dry_run_client_yaml_matches_kubectl(pair: Pair, ns: str, template: str) -> None:
    for extra in (["-o", "yaml"], ["-o", "name"], []):
        real, mini = pair.both("create", "--dry-run=client", *extra, *_argv(template, "twin"))
        assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err), extra
        assert real.rc == 0


def test_dry_run_flags_anywhere_and_server_dry_run_stores_nothing(pair: Pair, api: httpx.Client, ns: str) -> None:
    for argv in (
        ["create", "--dry-run=client", "-o", "yaml", "deployment", "web", "--image=nginx"],
        ["create", "deployment", "web", "--image=nginx", "--dry-run=client"],
        ["create", "deployment", "web", "--image=nginx", "--dry-run=server"],
        ["create", "deployment", "web", "--image=nginx", "--dry-run=server", "-o", "name"],
        ["create", "deployment", "web", "--image=nginx", "--dry-run=bogus"],
        ["create", "-f", f"{EX}/invalid-rc.yaml", "--dry-run=client"],
    ):
        real, mini = pair.both(*argv, "-n", ns)
        assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err), argv
    assert api.get(f"/apis/apps/v1/namespaces/{ns}/deployments").json()["items"] == []
    assert api.get(f"/api/v1/namespaces/{ns}/replicationcontrollers").json()["items"] == []


def test_create_job_from_cronjob(pair: Pair, api: httpx.Client, ns: str) -> None:
    assert pair.real("create", "cronjob", "cj", "--image=busybox", "--schedule=*/5 * * * *", "-n", ns).rc == 0
    real = pair.real("create", "job", "r-manual", "--from=cronjob/cj", "-n", ns)
    mini = pair.mini("create", "job", "m-manual", "--from=cronjob/cj", "-n", ns)
    assert (mini.rc, mini.out.replace("m-manual", "X")) == (real.rc, real.out.replace("r-manual", "X"))
    r_job = api.get(f"/apis/batch/v1/namespaces/{ns}/jobs/r-manual").json()
    m_job = api.get(f"/apis/batch/v1/namespaces/{ns}/jobs/m-manual").json()
    for key in ("annotations", "ownerReferences"):
        assert m_job["metadata"].get(key) == r_job["metadata"].get(key)
    assert m_job["spec"]["template"]["spec"]["containers"] == r_job["spec"]["template"]["spec"]["containers"]


def test_create_f_invalid_object_is_worded_like_kubectl(pair: Pair, ns: str) -> None:
    real, mini = pair.both("create", "-f", f"{EX}/invalid-rc.yaml", "-n", ns)
    assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err)
    assert real.err.startswith('The ReplicationController "bad" is invalid: ')


def test_dry_run_on_apply_delete_scale_label_annotate_changes_nothing(pair: Pair, api: httpx.Client, ns: str) -> None:
    manifest = str(REPO / "examples" / "nginx-deployment.yaml")
    for d in ("client", "server"):
        real, mini = pair.both("apply", "-f", manifest, f"--dry-run={d}", "-n", ns)  # would create
        assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err), d
    assert pair.real("apply", "-f", manifest, "-n", ns).rc == 0
    path = f"/apis/apps/v1/namespaces/{ns}/deployments/nginx-deployment"
    before = api.get(path).json()
    for d in ("client", "server"):
        for argv in (
            ("apply", "-f", manifest),
            ("scale", "deploy/nginx-deployment", "--replicas=9"),
            ("label", "deploy", "nginx-deployment", "a=b"),
            ("annotate", "deploy", "nginx-deployment", "a=b"),
            ("delete", "deploy", "nginx-deployment"),
            ("delete", "deploy", "nginx-deployment", "nope"),
        ):
            real, mini = pair.both(*argv, f"--dry-run={d}", "-n", ns)
            assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err), (d, argv)
    assert api.get(path).json() == before
