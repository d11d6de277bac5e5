"""Shared test fixtures: where the labelled photos in ../shared live (skipped when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_dataset(name: str) -> Path:
    """The folder of one ../shared data set, or skip the test saying why."""
    folder = SHARED_DATA / name
    if not folder.is_dir():
        pytest.skip(f"labelled photos not available: {folder} is absent (place ../shared beside the repo)")
    return folder


@pytest.fixture
def set_photos() -> Path:
    return shared_dataset("set-photos")


@pytest.fixture
def errcw_photos() -> Path:
    return shared_dataset("errcw-set-solver")
