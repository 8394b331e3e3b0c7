"""`fast_init`: a faster `__init__` for frozen, slotted dataclasses.

A frozen dataclass's generated `__init__` sets each field through `object.__setattr__`, about
1 µs for five fields; events and effects are made on the hot path, several per task. This
replaces it with one that calls each slot's descriptor directly (about 0.45 µs), keeping
everything else (immutability, equality, hashing, repr, pattern matching) exactly as the
dataclass defines it. Only plain fields with plain defaults are supported, which is all the core
uses; anything else fails at import.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def fast_init(cls: type[T]) -> type[T]:
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    params = []
    namespace: dict[str, Any] = {}
    for f in fields:
        assert f.default_factory is dataclasses.MISSING and f.init, f"{cls.__name__}.{f.name}"
        namespace[f"_set_{f.name}"] = getattr(cls, f.name).__set__
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            namespace[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
    body = "".join(f"    _set_{f.name}(self, {f.name})\n" for f in fields) or "    pass\n"
    exec(f"def __init__(self, {', '.join(params)}):\n{body}", namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[method-assign]
    return cls
