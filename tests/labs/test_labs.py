"""The README's tour, then every classroom lab in docs/labs/ written for simulated pods, command by
command, on one real cluster (tests/labs/labcluster.py): the tour runs first and the labs follow in
order on the same cluster, as a newcomer meets them. The labs that need real pods are in
tests/labs/test_real_pod_labs.py, on a cluster of their own, so the two run side by side."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.labs.labcluster import (
    ALL_LABS,
    CLASSROOM_FLAGS,
    LAB_DIR,
    LABS,
    PROCESS_LABS,
    README,
    REPO,
    LabCluster,
    lab_id,
    run_document,
    start_lab_cluster,
)
from tests.labs.labdoc import parse_lab


@pytest.fixture(scope="module")
def lab_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabCluster]:
    yield from start_lab_cluster(tmp_path_factory, [])


# Defined before the labs, so it runs first: a newcomer takes the tour, then lab 01 on the same cluster.
@pytest.mark.timeout(300)
def test_readme_tour_runs_as_written(lab_cluster: LabCluster) -> None:
    run_document(README, lab_cluster)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("lab_path", LABS, ids=lab_id)
def test_lab_runs_as_written(lab_path: Path, lab_cluster: LabCluster) -> None:
    run_document(lab_path, lab_cluster)


def test_every_lab_is_listed_in_the_labs_readme() -> None:
    readme = (LAB_DIR / "README.md").read_text()
    assert [p.name[:2] for p in ALL_LABS] == ["01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12",
                                              "13"]  # fmt: skip
    assert [p.name[:2] for p in PROCESS_LABS] == ["09", "10", "13"]
    assert all(f"]({p.name})" in readme for p in ALL_LABS)


@pytest.mark.parametrize("lab_path", ALL_LABS, ids=lab_id)
def test_lab_has_the_sections_and_links_exist(lab_path: Path) -> None:
    text = lab_path.read_text()
    headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert headings == ["Goal", "Background", "Steps", "Verify", "Clean-up"], headings
    lab = parse_lab(text, lab_path.name)
    assert lab.main and lab.cleanup, "a lab needs steps and clean-up steps"
    for target in re.findall(r"\]\((?!https?:)([^)#]+)(?:#[^)]*)?\)", text):
        assert (lab_path.parent / target).resolve().exists(), f"{lab_path.name} links to missing {target}"


def test_the_cluster_flags_are_one_preset() -> None:
    """The labs README, `make up` and this test start the same cluster: the classroom preset."""
    readme = (LAB_DIR / "README.md").read_text()
    lines = [ln for ln in readme.splitlines() if ln.startswith("$ mini-k8s up")]
    assert len(lines) == 1, lines
    assert shlex.split(lines[0][2:]) == ["mini-k8s", "up", "-d", *CLASSROOM_FLAGS]
    make_up = re.search(r"^up:.*\n\t(.+)$", (REPO / "Makefile").read_text(), flags=re.MULTILINE)
    assert make_up is not None and shlex.split(make_up.group(1))[1 : 2 + len(CLASSROOM_FLAGS)] == [
        "up", *CLASSROOM_FLAGS]  # fmt: skip


def test_the_tour_has_steps_and_a_clean_up() -> None:
    tour = parse_lab(README.read_text(), "README.md")
    assert len(tour.main) >= 10 and tour.cleanup, "the README's console blocks are the tour"
