"""Where schedspec's data lives: the vectors, the scopes, the TLA+ spec and its models, the
contract and protocol text the reports quote, and the JSON Schemas.

A checkout keeps one copy of each, at the top of the repository (`vectors/`, `models/`, `tla/`,
`spec/`), where people edit and review them. The wheel carries the same folders under
`schedspec/_data/`: the build copies them in (`[tool.hatch.build.targets.wheel.force-include]`
in `pyproject.toml`), so the repository still holds one copy and an installed schedspec needs
no checkout. `path(name)` is the package's `_data/name` when it exists (an installed wheel),
else the checkout's `name` (a checkout, or an editable install).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

FOLDERS = ("vectors", "models", "tla", "spec")
CHECKOUT = Path(__file__).resolve().parents[2]


def path(name: str) -> Path:
    """The folder `name` (one of FOLDERS) of the wheel, else of the checkout."""
    if name not in FOLDERS:
        raise ValueError(f"no data folder {name!r}; there are {', '.join(FOLDERS)}")
    bundled = Path(str(files("schedspec").joinpath("_data", name)))
    return bundled if bundled.is_dir() else CHECKOUT / name
