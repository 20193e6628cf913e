"""The repo's examples/ are the seeds' manifests, unchanged (they must work as the book prints them).

`examples/SHA256SUMS` holds the digests of ../shared/examples as they were copied (`sha256sum
*.yaml` there); a clone has no ../shared, so the files are checked against those digests."""

from __future__ import annotations

import hashlib

from tests.support.examples import EXAMPLES_DIR, example_files


def test_examples_are_the_shared_manifests_byte_for_byte() -> None:
    recorded = {}
    for line in (EXAMPLES_DIR / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        recorded[name] = digest
    ours = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in example_files()}
    assert recorded and ours == recorded
