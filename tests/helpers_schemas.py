"""JSON Schema validators for `spec/schemas/`, with the three schemas in one registry.

The schemas refer to each other by relative URI (`reply.schema.json#/$defs/...`) against their
`$id`s, so each validator resolves references through a registry holding all three.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SCHEMAS = Path(__file__).resolve().parent.parent / "spec" / "schemas"
NAMES = ("request", "reply", "vector")


def load_schema(name: str) -> dict[str, object]:
    schema: dict[str, object] = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    return schema


@cache
def validator(name: str) -> Draft202012Validator:
    """A validator for `name` ("request", "reply" or "vector") that resolves cross references."""
    resources = [Resource.from_contents(load_schema(n)) for n in NAMES]
    registry: Registry = Registry().with_resources(
        (str(r.contents["$id"]), r)  # type: ignore[index]
        for r in resources
    )
    return Draft202012Validator(load_schema(name), registry=registry)


def problems(name: str, instance: object) -> list[str]:
    """Every way `instance` fails schema `name`, as readable lines (empty when it is valid)."""
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
        for e in validator(name).iter_errors(instance)
    ]
