"""The documentation (issue 13, section 2): the site builds with mkdocs in strict mode (a broken
link or a missing reference is an error), and every public name has a docstring."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import schedspec
import schedspec.shell
import schedspec.strategies

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


def undocumented() -> list[str]:
    missing = []
    for module in (schedspec, schedspec.shell, schedspec.strategies):
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.getdoc(obj) or "").strip():
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
