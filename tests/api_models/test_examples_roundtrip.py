"""Every manifest in examples/ (the seeds' manifests) must decode, have no unknown fields, and round-trip."""

from __future__ import annotations

import glob
import os
from typing import Any

import pytest
import yaml

from api import registry
from api.models import from_dict, to_dict
from api.schema import type_errors, unknown_fields
from tests.support.examples import EXAMPLES_DIR as _EXAMPLES_DIR

EXAMPLES_DIR = str(_EXAMPLES_DIR)


def _documents() -> list[tuple[str, dict[str, Any]]]:
    docs = []
    for path in sorted(glob.glob(os.path.join(EXAMPLES_DIR, "*.yaml"))):
        with open(path, encoding="utf-8") as stream:
            for index, doc in enumerate(yaml.safe_load_all(stream)):
                if doc:
                    docs.append((f"{os.path.basename(path)}#{index}", doc))
    return docs


DOCUMENTS = _documents()


def test_the_examples_directory_is_not_empty() -> None:
    assert len(DOCUMENTS) >= 5


@pytest.mark.parametrize(("name", "doc"), DOCUMENTS, ids=[n for n, _ in DOCUMENTS])
def test_example_manifest_decodes_cleanly_and_round_trips_unchanged(name: str, doc: dict[str, Any]) -> None:
    rt = registry.by_kind(doc["apiVersion"], doc["kind"])
    assert rt is not None, f"{name}: no resource type for {doc['apiVersion']} {doc['kind']}"
    assert unknown_fields(rt, doc) == []
    assert type_errors(rt, doc) == []
    assert to_dict(from_dict(rt.model, doc)) == doc


def test_decoded_example_exposes_typed_attributes() -> None:
    rc = next(doc for name, doc in DOCUMENTS if name.startswith("nginx-rc"))
    model = from_dict(registry.by_key("replicationcontrollers").model, rc)  # type: ignore[union-attr]
    containers = model.spec.template.spec.containers
    assert [c.name for c in containers] == ["nginx-server", "log-output"]
    assert containers[1].args == ["-c", "tail -f /logdir/access.log"]
    assert model.spec.template.spec.volumes[0].empty_dir == {}
    assert model.spec.selector == {"app": "nginx"}
