"""The console script as a whole: every subcommand has help with an example; errors are one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def test_train_refuses_no_worker_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "set-photos").mkdir()
    (tmp_path / "set-photos" / "cards.csv").write_text("path,count,color,shading,shape\n")
    assert main(["train", "--data", str(tmp_path), "--out", str(tmp_path), "--workers", "0"]) != 0
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "--workers must be 1 or more" in error
