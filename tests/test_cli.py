"""The console script as a whole: every subcommand has help with an example; errors are one line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from setfinder.cli import _command_modules, build_parser, main

COMMANDS = [module.NAME for module in _command_modules()]


def test_expected_commands_exist() -> None:
    for name in ("find", "live", "referee", "solve", "play", "odds", "puzzle", "358", "synth", "train"):
        assert name in COMMANDS


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_help_with_an_example(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([name, "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert f"setfinder {name}" in text
    assert "example" in text.lower()


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out


def test_usage_error_exits_2() -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["find"])
    assert exit_info.value.code == 2


def test_module_entry_point_runs() -> None:
    result = subprocess.run([sys.executable, "-m", "setfinder", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("setfinder ")
