"""The textbook manifests, copied unchanged into the repo's examples/ (their digests: examples/SHA256SUMS)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = REPO / "examples"


def example_files() -> list[Path]:
    return sorted(EXAMPLES_DIR.glob("*.yaml"))
