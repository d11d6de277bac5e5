"""A window to show live mode's picture in, where a display exists (`window_problem` says why
not, in one line)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Protocol

import cv2

from vision.frames import Image

WINDOW_TITLE = "setfinder live (n/p: step SETs, a: all, h: hint, q: quit)"


class Display(Protocol):
    """Where annotated frames are shown: `Window`, or a stand-in (benchmarks draw but show nothing)."""

    def show(self, image: Image) -> str | None: ...

    def close(self) -> None: ...


class Window:
    """The on-screen view; `window_problem` must have said a window can open."""

    def __init__(self, title: str = WINDOW_TITLE) -> None:
        self.title = title
        cv2.namedWindow(self.title, cv2.WINDOW_NORMAL)

    def show(self, image: Image) -> str | None:
        """Show ``image``; return the key pressed (lower-case letter, "esc"), "closed" when the
        window was closed, or None."""
        cv2.imshow(self.title, image)
        code = cv2.waitKey(1)
        if cv2.getWindowProperty(self.title, cv2.WND_PROP_VISIBLE) < 1:
            return "closed"
        if code < 0:
            return None
        code &= 0xFF
        return "esc" if code == 27 else chr(code).lower()

    def close(self) -> None:
        cv2.destroyWindow(self.title)


def window_problem() -> str | None:
    """Why no window can be opened here (no display, OpenCV without windows), or None.

    Some OpenCV builds abort the whole process when a window cannot reach a display, so the
    question is asked of a short-lived child process, never of this one.
    """
    if "GUI:" in cv2.getBuildInformation() and _gui_backend() == "NONE":
        return "this OpenCV has no window support (opencv-python-headless)"
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return "no display found (DISPLAY is not set)"
    probe = "import cv2; cv2.namedWindow('probe'); cv2.waitKey(1); cv2.destroyAllWindows()"
    try:
        result = subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return "a test window did not open in time"
    if result.returncode != 0:
        return f"a test window could not open on display {os.environ.get('DISPLAY', '?')}"
    return None


def _gui_backend() -> str:
    for line in cv2.getBuildInformation().splitlines():
        if line.strip().startswith("GUI:"):
            return line.split(":", 1)[1].strip()
    return ""
