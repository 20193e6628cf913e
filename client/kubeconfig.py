"""kubeconfig: where the API server is, read the way kubectl reads it.

A kubeconfig file (YAML) lists clusters (a server URL), users (credentials; mini-k8s needs none)
and contexts (a cluster + a user + a default namespace), and says which context is current:

    apiVersion: v1
    kind: Config
    clusters: [{name: mini-k8s, cluster: {server: "http://127.0.0.1:8080"}}]
    users:    [{name: mini-k8s, user: {}}]
    contexts: [{name: mini-k8s, context: {cluster: mini-k8s, user: mini-k8s, namespace: default}}]
    current-context: mini-k8s

Which files, in kubectl's order of precedence:
1. `--kubeconfig PATH`: that file only (it must exist);
2. else `$KUBECONFIG`: a colon-separated list, merged - for each named cluster, user or context
   the *first* file that defines it wins, and so does the first `current-context` (missing files
   are skipped);
3. else `~/.kube/config` (a missing file means an empty config).

`--master URL` overrides the server of whatever context is chosen (the flag the Kubernetes
components have). With nothing configured at all, kubectl falls back to http://localhost:8080.

`write_context()` adds or replaces one cluster/user/context in a file and leaves every other
entry as it was - `mini-k8s up` must not wreck a kubeconfig that also points at real clusters.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from client.credentials import Credentials, from_kubeconfig
from client.rest import RESTClient

DEFAULT_SERVER = "http://localhost:8080"


class ConfigError(Exception):
    """The kubeconfig is missing, unreadable, or names something it does not define."""


def default_path() -> Path:
    return Path.home() / ".kube" / "config"


def _named(entries: Any) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for e in entries or []:
        if isinstance(e, dict) and e.get("name") and e["name"] not in out:
            out[e["name"]] = e
    return out


@dataclass
class KubeConfig:
    clusters: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {"server": ...}
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    contexts: dict[str, dict[str, Any]] = field(
        default_factory=dict
    )  # name -> {"cluster", "user", "namespace"}
    current_context: str = ""
    paths: list[Path] = field(default_factory=list)  # the files it came from

    def merge(self, doc: dict[str, Any], path: Path) -> None:
        """Merge one file's content; what is already here wins (kubectl's rule)."""
        for attr, section, inner in (("clusters", "clusters", "cluster"), ("users", "users", "user"),
                                     ("contexts", "contexts", "context")):  # fmt: skip
            mine = getattr(self, attr)
            for name, entry in _named(doc.get(section)).items():
                mine.setdefault(name, dict(entry.get(inner) or {}))
        if not self.current_context and doc.get("current-context"):
            self.current_context = str(doc["current-context"])
        self.paths.append(path)

    def context(self, name: str | None = None) -> dict[str, Any]:
        """The named context, or the current one ({} if none is set)."""
        name = name or self.current_context
        if not name:
            return {}
        if name not in self.contexts:
            raise ConfigError(f'context "{name}" does not exist')
        return self.contexts[name]

    def server(self, context: str | None = None) -> str:
        ctx = self.context(context)
        if not ctx:
            return DEFAULT_SERVER
        cluster = ctx.get("cluster") or ""
        if cluster not in self.clusters:
            raise ConfigError(f'cluster "{cluster}" does not exist')
        server = self.clusters[cluster].get("server")
        if not server:
            raise ConfigError(f'cluster "{cluster}" has no server')
        return str(server)

    def namespace(self, context: str | None = None) -> str:
        return str(self.context(context).get("namespace") or "default")

    def credentials(self, context: str | None = None) -> Credentials:
        """TLS settings and token of the context's cluster and user (client/credentials.py)."""
        ctx = self.context(context)
        if not ctx:
            return Credentials()
        cluster = self.clusters.get(ctx.get("cluster") or "") or {}
        user = self.users.get(ctx.get("user") or "") or {}
        return from_kubeconfig(cluster, user, self.paths[0].parent if self.paths else None)


def _read(path: Path) -> dict[str, Any]:
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f'error loading config file "{path}": {exc}') from exc
    if not isinstance(doc, dict):
        raise ConfigError(f'error loading config file "{path}": not a kubeconfig')
    return doc


def load_kubeconfig(path: str | os.PathLike[str] | None = None) -> KubeConfig:
    """Load `path`, else the files in $KUBECONFIG, else ~/.kube/config (see module doc)."""
    config = KubeConfig()
    if path:
        p = Path(path).expanduser()
        if not p.exists():
            raise ConfigError(f"stat {p}: no such file or directory")
        config.merge(_read(p), p)
        return config
    env = os.environ.get("KUBECONFIG", "")
    candidates = [Path(p).expanduser() for p in env.split(os.pathsep) if p] if env else [default_path()]
    for p in candidates:
        if p.exists():
            config.merge(_read(p), p)
    return config


@dataclass(frozen=True)
class ClientConfig:
    """What a component needs to build its RESTClient."""

    server: str
    namespace: str = "default"
    context: str = ""
    credentials: Credentials = Credentials()


def client_config(
    kubeconfig: str | os.PathLike[str] | None = None, *, master: str | None = None, context: str | None = None
) -> ClientConfig:
    """Resolve `--kubeconfig`, `--context` and `--master` into a server URL and namespace."""
    try:
        config = load_kubeconfig(kubeconfig)
    except ConfigError:
        if master and not kubeconfig:
            return ClientConfig(master)
        raise
    name = context or config.current_context
    if master:  # --master wins over the cluster's server; the context may still set the namespace
        namespace = config.namespace(context) if name in config.contexts else "default"
        if not kubeconfig or name not in config.contexts:
            return ClientConfig(master, namespace, name)
        # an explicit --kubeconfig with --master, as client-go's BuildConfigFromFlags: its CA and
        # user credentials still apply (a kubeconfig made for another address of the same server);
        # without --kubeconfig nothing of the user's own file is sent to the --master address
        return ClientConfig(master, namespace, name, config.credentials(context))
    return ClientConfig(config.server(context), config.namespace(context), name, config.credentials(context))


def new_client(
    kubeconfig: str | os.PathLike[str] | None = None,
    *,
    master: str | None = None,
    context: str | None = None,
    qps: float = 20.0,
    burst: int = 30,
    user_agent: str = "mini-k8s-client",
) -> RESTClient:
    """A RESTClient for the configured server: what every component's main() calls."""
    cc = client_config(kubeconfig, master=master, context=context)
    return RESTClient(cc.server, qps=qps, burst=burst, namespace=cc.namespace, user_agent=user_agent,
                      credentials=cc.credentials)  # fmt: skip


def _upsert(entries: list[Any], name: str, inner_key: str, inner: dict[str, Any]) -> list[Any]:
    out = [e for e in entries if not (isinstance(e, dict) and e.get("name") == name)]
    out.append({"name": name, inner_key: inner})
    return out


def write_context(
    path: str | os.PathLike[str] | None,
    name: str,
    server: str,
    *,
    namespace: str | None = None,
    set_current: bool = True,
    cluster: dict[str, Any] | None = None,
    user: dict[str, Any] | None = None,
) -> Path:
    """Add or replace cluster, user and context `name` (pointing at `server`) in the kubeconfig
    file at `path` (default: the first $KUBECONFIG file, else ~/.kube/config); `cluster` and `user`
    add their entries' other fields (CA data, client certificate). Every other entry and key is kept.
    The file is replaced atomically, mode 0600 like kubectl writes it."""
    if path:
        target = Path(path).expanduser()
    else:
        env = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
        target = Path(env[0]).expanduser() if env else default_path()
    doc: dict[str, Any] = _read(target) if target.exists() else {}
    doc.setdefault("apiVersion", "v1")
    doc.setdefault("kind", "Config")
    doc.setdefault("preferences", {})
    context: dict[str, Any] = {"cluster": name, "user": name}
    if namespace:
        context["namespace"] = namespace
    doc["clusters"] = _upsert(list(doc.get("clusters") or []), name, "cluster", {"server": server, **(cluster or {})})
    doc["users"] = _upsert(list(doc.get("users") or []), name, "user", dict(user or {}))
    doc["contexts"] = _upsert(list(doc.get("contexts") or []), name, "context", context)
    if set_current or not doc.get("current-context"):
        doc["current-context"] = name
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".kubeconfig-")
    try:
        with os.fdopen(fd, "w") as f:
            yaml.safe_dump(doc, f, default_flow_style=False, sort_keys=False)
        os.chmod(tmp, 0o600)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return target
