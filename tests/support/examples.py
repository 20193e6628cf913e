"""The textbook manifests (from ../shared/examples, copied into the repo's examples/ unchanged)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = REPO / "examples"
SHARED_EXAMPLES_DIR = REPO.parent / "shared" / "examples"


def example_files() -> list[Path]:
    return sorted(EXAMPLES_DIR.glob("*.yaml"))
