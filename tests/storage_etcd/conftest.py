"""Fixtures for the etcd backend tests: a real etcd, see tests/support/etcd.py."""

from tests.support.etcd import (  # noqa: F401
    etcd_cluster,
    etcd_key_prefix,
    etcd_process,
    etcd_storage,
    etcd_storage_factory,
)
