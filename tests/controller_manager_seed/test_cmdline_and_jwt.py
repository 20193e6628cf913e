"""The pure parts: how a pflag command line is rewritten for click, and the legacy token's JWT
with an EC key (the end-to-end test signs with RSA)."""

from __future__ import annotations

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from api import cmdline
from controller_manager.controllers.serviceaccount_jwt import key_id, legacy_token
from controller_manager.main import cli

COMMAND = cmdline.build(cli, "mini-controller-manager")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (["--log_dir=/var/log/k_8s"], ["--log-dir=/var/log/k_8s"]),  # the name only, never the value
        (["--root_ca_file", "/a_b"], ["--root-ca-file", "/a_b"]),
        (["--logtostderr=false"], ["--no-logtostderr"]),
        (["--logtostderr=T"], ["--logtostderr"]),
        (["--leader_elect=1"], ["--leader-elect"]),
        (["--alsologtostderr=false"], []),  # no off switch: false is its default
        (["--logtostderr=maybe"], ["--logtostderr=maybe"]),  # left for click to refuse
        (["-v=4"], ["-v", "4"]),
        (["--v=4", "--", "--log_dir=x"], ["--v=4", "--", "--log_dir=x"]),
    ],
)
def test_pflag_spellings_become_click_ones(given: list[str], expected: list[str]) -> None:
    assert cmdline.normalize_argv(given, COMMAND) == expected


def test_master_without_scheme_is_http() -> None:
    assert cmdline.server_url("172.17.8.100:8080") == "http://172.17.8.100:8080"
    assert cmdline.server_url("https://10.0.0.1:6443") == "https://10.0.0.1:6443"
    assert cmdline.server_url("") == ""


def test_ec_key_signs_es256_with_kubernetes_key_id() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    sa = {"metadata": {"name": "robot", "namespace": "ci", "uid": "u-1"}}
    token = legacy_token(key, sa, "robot-token")
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "ES256" and header["kid"] == key_id(key)
    claims = jwt.decode(token, key.public_key(), algorithms=["ES256"])
    assert claims["sub"] == "system:serviceaccount:ci:robot" and "exp" not in claims
