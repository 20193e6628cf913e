"""The repo's examples/ are the seeds' manifests, unchanged (they must work as the book prints them)."""

from __future__ import annotations

import pytest

from tests.support.examples import SHARED_EXAMPLES_DIR, example_files


def test_examples_are_the_shared_manifests_byte_for_byte() -> None:
    if not SHARED_EXAMPLES_DIR.is_dir():
        pytest.skip("../shared/examples is not beside this checkout")
    shared = {p.name: p.read_bytes() for p in SHARED_EXAMPLES_DIR.glob("*.yaml")}
    ours = {p.name: p.read_bytes() for p in example_files()}
    assert ours == shared
