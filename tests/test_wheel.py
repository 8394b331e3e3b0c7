"""What a user installs works: the built wheel, in a fresh virtual environment, outside any
checkout (issue 13, section 1).

One test, because its set-up is the cost: build the wheel, make a virtual environment with no
dev extras, install the wheel with its `verify` extra and pytest, then run each kind of user's
first command from an empty directory. The data the commands need (vectors, scopes, TLA+ spec,
contract) comes from inside the wheel (`schedspec/data.py`). Last, with Hypothesis removed,
a plain pytest run of an unrelated project must still pass: the plugin loads in every pytest run
of the environment.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = "schedspec.conformance.reference:ReferenceImplementation"


def run(command: list[str], cwd: Path, limit_s: float = 600) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=limit_s)
    assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-3000:])
    return done.stdout


@pytest.mark.skipif(shutil.which("java") is None, reason="verify needs java (make check-java)")
def test_the_wheel_serves_every_kind_of_user_from_a_fresh_environment(tmp_path: Path) -> None:
    wheels, venv, work = tmp_path / "wheels", tmp_path / "venv", tmp_path / "work"
    work.mkdir()
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    run([*pip, "wheel", "--no-deps", "-w", str(wheels), str(ROOT)], tmp_path)
    (wheel,) = wheels.glob("schedspec-*.whl")
    run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    python, schedspec = str(venv / "bin" / "python"), str(venv / "bin" / "schedspec")
    vpip = [python, "-m", "pip", "--disable-pip-version-check", "-q"]
    run([*vpip, "install", f"{wheel}[verify]", "pytest"], tmp_path)

    assert run([schedspec, "--version"], work).startswith("schedspec ")
    run([schedspec, "conform", "--impl", REFERENCE, "--no-fuzz"], work)  # the implementer
    run([schedspec, "verify", "cycle"], work)  # the reviewer: explorer and TLC agree
    run([schedspec, "models", "--names"], work)
    (work / "test_users.py").write_text(
        "from hypothesis import given\n"
        "from schedspec.strategies import dags\n"  # the Hypothesis user
        "from schedspec import TaskScheduler, Runner\n\n"
        "@given(dags())\n"
        "def test_dags(graph):\n"
        "    assert graph is not None\n\n"
        "def test_runner():\n"  # the scheduler user
        "    s = TaskScheduler(max_concurrency=2)\n"
        "    s.submit('a', [], lambda token: 1)\n"
        "    s.start()\n"
        "    assert Runner(s).run().executed == 1\n"
    )
    plugin = [f"--schedspec-impl={REFERENCE}", "--schedspec-examples=3"]
    out = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin], work)
    summary = out.strip().splitlines()[-1]  # the vectors, the fuzzing test and the user's two
    assert "passed" in summary and "failed" not in summary, summary

    # An unrelated project, in the same environment, once Hypothesis is gone.
    run([*vpip, "uninstall", "-y", "hypothesis"], tmp_path)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "test_plain.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    assert "1 passed" in run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], plain)
