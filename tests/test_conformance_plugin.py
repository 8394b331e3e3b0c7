"""The pytest plugin, used as a user would: pytest run in a directory of its own, with one test
file of the user's and no conftest, the plugin loaded through its `pytest11` entry point.

Each case runs pytest in a subprocess, against the reference, a mutant of the catalogue, a
Python implementation living in the user's directory, and misbehaving commands, and checks the
outcome and the output; a run that does not end within its limit fails with TimeoutExpired.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers_scripts import script_command
from schedspec.conformance import corpus

USERS_TEST = """
def test_users_own_test():
    assert 1 + 1 == 2
"""

NEWEST_FIRST = """
from schedspec.conformance.plain import PlainScheduler


class NewestFirst(PlainScheduler):
    def choose(self, count):
        return list(reversed(self.ready_versions()))[: max(count, 0)]
"""


def run_pytest(directory: Path, *args: str, limit_s: float = 120) -> tuple[int, str]:
    (directory / "test_users_own.py").write_text(USERS_TEST)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=limit_s,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def test_plugin_is_inert_without_its_option(tmp_path: Path) -> None:
    status, out = run_pytest(tmp_path)
    assert status == 0 and "1 passed" in out and "schedspec" not in out


def test_plugin_passes_the_reference_one_test_per_vector_plus_fuzzing(tmp_path: Path) -> None:
    status, out = run_pytest(
        tmp_path,
        "--schedspec-impl=schedspec.conformance.reference:ReferenceImplementation",
        "--schedspec-examples=20",
    )
    assert status == 0, out[-2000:]
    assert f"{len(corpus.load_corpus()) + 2} passed" in out
    assert "schedspec conformance" in out and "clauses failed: none" in out


def test_plugin_fails_a_mutant_with_readable_failures_and_the_clauses(tmp_path: Path) -> None:
    status, out = run_pytest(
        tmp_path,
        "--schedspec-impl=schedspec.conformance.mutants:ForcedCancel",
        "--schedspec-examples=30",
        "--schedspec-shrink-runs=100",
        f"--schedspec-out={tmp_path / 'found'}",
        "-k",
        "claim-token or cancel-running or fuzz or users_own",
    )
    assert status == 1, out[-2000:]
    assert "FAILED schedspec::vector::claim-token-set-by-cancel-request" in out
    assert "FAILED schedspec::fuzz" in out and "diverged in example" in out
    assert 'expected "cancel_requested", got "accepted"' in out
    assert "clauses failed:" in out and "CANCEL-3" in out
    assert "FAILED test_users_own.py" not in out  # the user's own test runs as before
    assert list((tmp_path / "found").glob("fuzz-seed-0.json"))


def test_plugin_relaxed_mode_follows_an_implementation_of_the_users_own(tmp_path: Path) -> None:
    (tmp_path / "newest.py").write_text(textwrap.dedent(NEWEST_FIRST))
    selection = ["-k", "claim or ver- or fuzz"]
    status, out = run_pytest(
        tmp_path, "--schedspec-impl=newest:NewestFirst", "--schedspec-examples=20", *selection
    )
    assert status == 1 and "CLAIM-3" in out, out[-2000:]
    status, out = run_pytest(
        tmp_path,
        "--schedspec-impl=newest:NewestFirst",
        "--schedspec-relaxed",
        "--schedspec-examples=60",
        *selection,
    )
    assert status == 0, out[-2000:]


@pytest.mark.parametrize(("script", "verdict"), [("crash", "crashed"), ("hang", "timed_out")])
def test_wire_plugin_gives_misbehaving_commands_a_clear_verdict(
    tmp_path: Path, script: str, verdict: str
) -> None:
    status, out = run_pytest(
        tmp_path,
        f"--schedspec-impl={script_command(tmp_path, script)}",
        "--schedspec-timeout=0.5",
        "--schedspec-examples=3",
        "--schedspec-shrink-time=1",
        "-k",
        "claim-at-most-once or phase-open or fuzz",
        limit_s=60,
    )
    assert status == 1, out[-2000:]
    assert out.count(f"{verdict}:") >= 3, out[-3000:]  # two vectors and the fuzzing test
    if script == "crash":
        assert "KeyError: 'boom'" in out  # its standard error is shown


def test_plugin_reports_a_bad_implementation_as_a_usage_error(tmp_path: Path) -> None:
    status, out = run_pytest(tmp_path, "--schedspec-impl=nowhere.at_all:Factory")
    assert status == 4 and "--schedspec-impl nowhere.at_all:Factory" in out


@pytest.mark.parametrize(
    "option", ["--schedspec-timeout=nan", "--schedspec-shrink-time=-1", "--schedspec-shrink-runs=0"]
)
def test_wire_plugin_refuses_absurd_options_as_usage_errors(tmp_path: Path, option: str) -> None:
    impl = "--schedspec-impl=schedspec.conformance.reference:ReferenceImplementation"
    status, out = run_pytest(tmp_path, impl, option)
    assert status == 4 and f"argument {option.split('=')[0]}" in out, out


def test_plugin_imports_no_hypothesis_unless_asked(tmp_path: Path) -> None:
    """Installed, the plugin loads in every pytest run of the environment: without
    --schedspec-impl it must not import Hypothesis (which the environment may not have)."""
    (tmp_path / "conftest.py").write_text(
        "import sys\n"
        "def pytest_sessionfinish(session):\n"
        "    print('HYPOTHESIS LOADED' if 'hypothesis' in sys.modules else 'NO HYPOTHESIS')\n"
    )
    status, out = run_pytest(tmp_path, "-s", "-p", "no:hypothesispytest")
    assert status == 0 and "NO HYPOTHESIS" in out, out
