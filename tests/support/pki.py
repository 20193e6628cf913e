"""Throwaway PKIs for tests of the secure port: the product's own (cluster/pki.py) in a test's
temporary directory — a CA, serving certificates for 127.0.0.1 and localhost, client
certificates (CN user, O groups)."""

from __future__ import annotations

from cluster.pki import CA, Pair

__all__ = ["CA", "Pair"]
