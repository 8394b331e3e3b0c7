"""mkdocs hook: the contract, the protocol and the explorer's spec are pages of the site, read
from spec/ at build time, so that the repository keeps one copy of each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

SPEC = Path(__file__).resolve().parents[1] / "spec"


def on_files(files: Files, config: Any) -> Files:
    for name in ("contract", "protocol", "explore"):
        page = File.generated(config, f"{name}.md", abs_src_path=str(SPEC / f"{name}.md"))
        files.append(page)
    return files
