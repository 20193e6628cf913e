"""kubeconfig: kubectl's file precedence and merge rules; write_context keeps other entries."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from client.kubeconfig import ConfigError, client_config, load_kubeconfig, new_client, write_context


def config_file(
    path: Path, name: str, server: str, namespace: str | None = None, current: bool = True
) -> Path:
    ctx: dict = {"cluster": name, "user": name}
    if namespace:
        ctx["namespace"] = namespace
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": server}}],
        "users": [{"name": name, "user": {"token": "secret"}}],
        "contexts": [{"name": name, "context": ctx}],
    }
    if current:
        doc["current-context"] = name
    path.write_text(yaml.safe_dump(doc))
    return path


def test_explicit_path_wins_and_must_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(config_file(tmp_path / "env", "env", "http://env:1")))
    explicit = config_file(tmp_path / "mine", "mine", "http://mine:2", namespace="team")
    cc = client_config(explicit)
    assert (cc.server, cc.namespace, cc.context) == ("http://mine:2", "team", "mine")
    with pytest.raises(ConfigError, match="no such file"):
        load_kubeconfig(tmp_path / "missing")


def test_kubeconfig_env_merges_files_first_one_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = config_file(tmp_path / "1", "one", "http://one:1")
    second = config_file(tmp_path / "2", "two", "http://two:2", namespace="ns2")
    # the same cluster name in a later file does not override the first file's
    doc = yaml.safe_load(second.read_text())
    doc["clusters"].append({"name": "one", "cluster": {"server": "http://shadowed:9"}})
    second.write_text(yaml.safe_dump(doc))
    monkeypatch.setenv("KUBECONFIG", f"{first}:{tmp_path / 'absent'}:{second}")
    config = load_kubeconfig()
    assert config.current_context == "one"
    assert config.server() == "http://one:1"
    assert config.server("two") == "http://two:2" and config.namespace("two") == "ns2"
    assert client_config(context="two").namespace == "ns2"
    with pytest.raises(ConfigError, match='context "nope" does not exist'):
        config.server("nope")


def test_master_overrides_the_server_and_defaults_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(config_file(tmp_path / "c", "c", "http://c:1", namespace="n")))
    cc = client_config(master="http://127.0.0.1:8080")
    assert (cc.server, cc.namespace) == ("http://127.0.0.1:8080", "n")
    assert cc.credentials.token == ""  # nothing of the user's own file goes to the --master address
    explicit = client_config(tmp_path / "c", master="https://other-name:6443")  # client-go's BuildConfigFromFlags
    assert (explicit.server, explicit.credentials.token) == ("https://other-name:6443", "secret")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    assert client_config().server == "http://localhost:8080"  # kubectl's fallback
    client = new_client(master="http://127.0.0.1:9", qps=5, burst=7)
    assert client.base_url == "http://127.0.0.1:9" and client.limiter.burst == 7


def test_write_context_adds_ours_and_keeps_everything_else(tmp_path: Path) -> None:
    path = config_file(tmp_path / "config", "prod", "https://prod:6443")
    doc = yaml.safe_load(path.read_text())
    doc["preferences"] = {"colors": True}
    path.write_text(yaml.safe_dump(doc))

    write_context(path, "mini-k8s", "http://127.0.0.1:8080", namespace="default")
    write_context(path, "mini-k8s", "http://127.0.0.1:9090")  # again: replaced, not duplicated
    after = yaml.safe_load(path.read_text())
    assert after["current-context"] == "mini-k8s"
    assert after["preferences"] == {"colors": True}
    assert [c["name"] for c in after["clusters"]] == ["prod", "mini-k8s"]
    assert after["users"][0] == {"name": "prod", "user": {"token": "secret"}}
    config = load_kubeconfig(path)
    assert config.server() == "http://127.0.0.1:9090"
    assert config.server("prod") == "https://prod:6443"
    assert path.stat().st_mode & 0o777 == 0o600

    fresh = write_context(tmp_path / "sub" / "new", "mini-k8s", "http://x:1", set_current=False)
    assert load_kubeconfig(fresh).current_context == "mini-k8s"  # the only context becomes current
