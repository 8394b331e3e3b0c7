"""A command that checked nothing never exits 0 (issue 13): `verify`, `explore`, `models` and
`tlc` without their scopes or without the TLA+ spec say what is missing and exit 2; and
`schedspec --version` names the installed version."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

import schedspec
from schedspec import cli, tlc
from schedspec.explore import scope


def test_version_is_the_installed_one() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "schedspec", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.strip() == f"schedspec {version('schedspec')}"
    assert schedspec.__version__ == version("schedspec")


@pytest.mark.parametrize(
    "argv", [["models"], ["models", "--names"], ["verify", "--no-tlc"], ["tlc"], ["explore", "x"]]
)
def test_no_scopes_is_an_error_not_a_green(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setattr(scope, "MODELS_DIR", tmp_path)
    assert cli.main(argv) == 2
    out = capsys.readouterr().out
    assert "no scope" in out and str(tmp_path) in out.replace("\n", ""), out


def test_a_missing_spec_is_an_environment_fault_not_a_violation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(tlc, "TLA_DIR", tmp_path)
    with pytest.raises(tlc.TlcUnavailableError, match="no TLA\\+ spec"):
        tlc.run_tlc("cycle")
    assert cli.main(["verify", "cycle"]) == 2
    assert "no TLA+ spec" in capsys.readouterr().out
