"""The documentation (issue 13, section 2): the site builds with mkdocs in strict mode (a broken
link or a missing reference is an error), and every public name has a docstring."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import schedspec
import schedspec.shell
import schedspec.strategies

# The core's modules (`schedspec.core.step` the attribute is the function `step`).
CORE = [importlib.import_module(f"schedspec.core.{m}") for m in ("effects", "events", "types")]
CORE += [importlib.import_module(f"schedspec.core.{m}") for m in ("state", "step")]

ROOT = Path(__file__).resolve().parents[1]


def test_the_site_builds_without_warnings(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "reference" / "errors" / "index.html").is_file()
    assert "shown" in (tmp_path / "reference" / "errors" / "index.html").read_text()
    core = (tmp_path / "reference" / "core" / "index.html").read_text()
    for name in ("step.step", "state.State.facts", "effects.Rejected", "events.Submit"):
        assert f'id="schedspec.core.{name}"' in core, name


def _documented(name: str, obj: object) -> bool:
    """A docstring written by hand: not none, and not the signature a dataclass makes up."""
    doc = obj.__doc__ if inspect.isclass(obj) else inspect.getdoc(obj)
    return bool((doc or "").strip()) and not (inspect.isclass(obj) and doc.startswith(f"{name}("))


def _core_names(module: ModuleType) -> list[str]:
    return [
        name
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(obj) or inspect.isfunction(obj))
        and obj.__module__ == module.__name__
    ]


def undocumented() -> list[str]:
    missing = []
    listed = [(m, list(m.__all__)) for m in (schedspec, schedspec.shell, schedspec.strategies)]
    for module, names in [*listed, *((m, _core_names(m)) for m in CORE)]:
        for name in names:
            obj = getattr(module, name)
            if not _documented(name, obj):
                missing.append(f"{module.__name__}.{name}")
            if not inspect.isclass(obj):
                continue
            for member, value in vars(obj).items():
                public = not member.startswith("_")
                routine = callable(value) or isinstance(value, property)
                if public and routine and not (inspect.getdoc(value) or "").strip():
                    missing.append(f"{module.__name__}.{name}.{member}")
    return missing


def test_every_public_name_is_documented() -> None:
    assert undocumented() == []
