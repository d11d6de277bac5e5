"""Where live mode's frames come from, and whether the picture moves.

Frames come from a `FrameSource`: `VideoSource` wraps `cv2.VideoCapture` (a camera index or a
video file; a video file stands in for a camera anywhere), `ArraySource` replays images held in
memory (tests, benchmarks), and `LatestFrameReader` reads a camera in its own thread and keeps
only the newest frame. `MotionMeter` tells whether the picture is moving (a hand, the camera).
Live mode and the referee share them. Everything a user can fix raises `LiveError` with a
one-line message; the command line turns it into an error line and a non-zero exit.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]

# A camera whose reads keep failing for this long is taken as unplugged.
DISCONNECT_AFTER_S = 2.0
CAMERA_SIZE = (960, 720)  # asked of a camera; it may pick the nearest size it supports


class LiveError(RuntimeError):
    """A problem the user can fix (no camera, unreadable video, no display): one line."""


@dataclass(frozen=True)
class Frame:
    """One picture from a source.

    ``image`` is BGR uint8 (H, W, 3). ``index`` counts frames delivered by the source from 0
    (gaps in processed indices are skipped frames). ``time`` is seconds into the stream: the
    video position for files, time since opening for cameras. ``captured_at`` is the
    ``time.perf_counter()`` at which the frame arrived, for latency.
    """

    index: int
    time: float
    image: Image
    captured_at: float


class FrameSource(Protocol):
    """Where frames come from. ``read`` returns ``None`` when the stream has ended for good
    (end of a video) and raises `LiveError` when it broke (a camera unplugged)."""

    name: str
    fps: float
    is_camera: bool

    def read(self) -> Frame | None: ...

    def close(self) -> None: ...


class Capture(Protocol):
    """The part of ``cv2.VideoCapture`` used here (so tests can stand in a fake camera)."""

    def read(self) -> tuple[bool, Any]: ...

    def get(self, prop: int) -> float: ...

    def isOpened(self) -> bool: ...  # noqa: N802 (OpenCV's name)

    def release(self) -> None: ...


# -- sources ------------------------------------------------------------------------------------
class VideoSource:
    """Frames from a ``cv2.VideoCapture``-like object, read in the caller's thread.

    Open with `open_camera` or `open_video`. For a camera, reads that fail for
    ``disconnect_after`` seconds in a row raise `LiveError("camera disconnected ...")`; for a
    video file the first failed read is the end of the video.
    """

    def __init__(self, capture: Capture, *, name: str, is_camera: bool,
                 disconnect_after: float = DISCONNECT_AFTER_S) -> None:
        self.capture = capture
        self.name = name
        self.is_camera = is_camera
        reported_fps = float(capture.get(cv2.CAP_PROP_FPS) or 0.0)
        self.fps = reported_fps if 1.0 <= reported_fps <= 240.0 else 30.0
        self.disconnect_after = disconnect_after
        self._index = 0
        self._opened_at = time.perf_counter()

    @classmethod
    def open_camera(cls, index: int, size: tuple[int, int] = CAMERA_SIZE) -> VideoSource:
        """The camera with this index (0 is the first); raises `LiveError` if it does not open
        or gives no picture."""
        if index < 0:
            raise LiveError(f"camera index must be 0 or more, got {index}")
        with quiet_opencv():
            capture = cv2.VideoCapture(index)
            opened = capture.isOpened()
            if opened:
                capture.set(cv2.CAP_PROP_FRAME_WIDTH, size[0])
                capture.set(cv2.CAP_PROP_FRAME_HEIGHT, size[1])
        if not opened:
            capture.release()
            raise LiveError(f"camera {index} did not open; check it is plugged in and not in use "
                            "by another program, try another --camera index, or use --video FILE")
        return cls(capture, name=f"camera {index}", is_camera=True)

    @classmethod
    def open_video(cls, path: str | Path) -> VideoSource:
        """A video file standing in for a camera; raises `LiveError` if it cannot be read."""
        path = Path(path)
        if not path.is_file():
            raise LiveError(f"video file {path} not found")
        with quiet_opencv():
            capture = cv2.VideoCapture(str(path))
            opened = capture.isOpened()
        if not opened:
            capture.release()
            raise LiveError(f"cannot read video {path}: not a video, or in a format this OpenCV "
                            "cannot decode (try MP4 or AVI)")
        return cls(capture, name=str(path), is_camera=False)

    def read(self) -> Frame | None:
        failing_since: float | None = None
        while True:
            with quiet_opencv():
                ok, image = self.capture.read()
            if ok and image is not None and image.ndim == 3 and image.shape[2] == 3:
                break
            if not self.is_camera:
                if self._index == 0:
                    raise LiveError(f"cannot read video {self.name}: it has no frames OpenCV can decode")
                return None
            now = time.perf_counter()
            failing_since = failing_since if failing_since is not None else now
            if now - failing_since >= self.disconnect_after:
                if self._index == 0:
                    raise LiveError(f"{self.name} opened but gave no picture for {self.disconnect_after:g} s; "
                                    "check no other program uses it and that this program may use the camera")
                raise LiveError(f"{self.name} disconnected (no picture for {self.disconnect_after:g} s "
                                f"after {self._index} frames); plug it back in and start again")
            time.sleep(0.02)
        now = time.perf_counter()
        stream_time = (now - self._opened_at) if self.is_camera else self._index / self.fps
        frame = Frame(self._index, stream_time, np.ascontiguousarray(image, dtype=np.uint8), now)
        self._index += 1
        return frame

    def close(self) -> None:
        self.capture.release()


class ArraySource:
    """Frames replayed from images in memory (BGR uint8 (H, W, 3) each), ``loops`` times over
    (``None``: forever). For tests and benchmarks; behaves like a video file."""

    def __init__(self, images: Sequence[Image], fps: float = 30.0, *, loops: int | None = 1,
                 name: str = "frames in memory") -> None:
        if not images:
            raise ValueError("images must hold at least one frame")
        if fps <= 0:
            raise ValueError(f"fps must be positive, got {fps}")
        self.images = images
        self.fps = fps
        self.loops = loops
        self.name = name
        self.is_camera = False
        self._index = 0

    def read(self) -> Frame | None:
        if self.loops is not None and self._index >= self.loops * len(self.images):
            return None
        image = self.images[self._index % len(self.images)]
        frame = Frame(self._index, self._index / self.fps, image, time.perf_counter())
        self._index += 1
        return frame

    def close(self) -> None:
        pass


class LatestFrameReader:
    """Reads a source in a background thread and hands out only the newest frame.

    ``read`` blocks until a frame newer than the last one handed out arrives; frames that
    arrived in between are dropped (counted in ``skipped``), so a slow consumer sees the table
    as it is now, not as it was. With ``pace_fps`` the thread waits between frames as a camera
    would (to replay a video file in real time); a camera paces itself.
    """

    def __init__(self, source: FrameSource, pace_fps: float | None = None) -> None:
        self.source = source
        self.name = source.name
        self.fps = source.fps
        self.is_camera = source.is_camera
        self.skipped = 0
        self._pace = 1.0 / pace_fps if pace_fps else 0.0
        self._latest: Frame | None = None
        self._ended = False
        self._error: LiveError | None = None
        self._stop = threading.Event()
        self._ready = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="setfinder-capture", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        next_due = time.perf_counter()
        try:
            while not self._stop.is_set():
                frame = self.source.read()
                with self._ready:
                    if frame is None:
                        self._ended = True
                    else:
                        if self._latest is not None:
                            self.skipped += 1
                        self._latest = frame
                    self._ready.notify_all()
                if frame is None:
                    return
                if self._pace:
                    next_due += self._pace
                    delay = next_due - time.perf_counter()
                    if delay > 0:
                        self._stop.wait(delay)
                    else:
                        next_due = time.perf_counter()  # behind: do not try to catch up
        except Exception as error:  # noqa: BLE001 (handed to the reading thread, not lost)
            failure = error if isinstance(error, LiveError) else LiveError(f"{self.name} failed: {error}")
            with self._ready:
                self._error = failure
                self._ready.notify_all()

    def read(self) -> Frame | None:
        with self._ready:
            while self._latest is None and not self._ended and self._error is None:
                if not self._thread.is_alive():
                    raise LiveError(f"{self.name}: the capture thread stopped")
                self._ready.wait(timeout=0.5)
            frame, self._latest = self._latest, None
            if frame is not None:
                return frame
            if self._error is not None:
                raise self._error
            return None

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)
        self.source.close()


# -- what the picture shows -----------------------------------------------------------------------
class MotionMeter:
    """Says whether the picture is unsettled: something moving, or reaching in from the edge.

    Each frame is shrunk to 1/8 size in grey (which also averages away sensor noise). Two tests:

    * **moving**: compared with the frame ``lag`` frames before it, so that slow movement, a
      few pixels a frame, adds up; moving when more than ``fraction`` of the small pixels
      changed by more than ``level`` grey levels.
    * **reaching in**: compared with a reference picture of the still table, a changed patch
      of at least ``edge_fraction`` of the picture that touches the frame's edge (0.2%: a card
      slid in from the edge before its hand is in view changes about that much, white paper
      over white paper). Hands and arms always come in over the edge, while cards taken or
      dealt change patches inside the picture; so a hand resting on the table still counts,
      where the frame-to-frame test alone would call it still. The reference is the last
      picture that stayed still for ``accept_after`` frames (counted from the last movement
      and from the first frame of a change at the edge), so a lasting change (a cup put down
      at the edge, the light) is accepted after that long.

    Memory: ``lag`` + 1 small frames.
    """

    def __init__(self, level: int = 18, fraction: float = 0.01, edge_fraction: float = 0.002,
                 lag: int = 5, accept_after: int = 30) -> None:
        if lag < 1 or accept_after < 1:
            raise ValueError(f"lag and accept_after must be at least 1 frame, got {lag}, {accept_after}")
        self.level = level
        self.fraction = fraction
        self.edge_fraction = edge_fraction
        self.accept_after = accept_after
        self._recent: deque[npt.NDArray[np.uint8]] = deque(maxlen=lag)
        self._reference: npt.NDArray[np.uint8] | None = None
        self._still_for = 0
        self.moving = False
        self.reaching_in = False

    def update(self, image: Image) -> bool:
        """``image`` BGR uint8 (H, W, 3); True when the picture is moving or reaching in."""
        small = cv2.resize(image, (max(1, image.shape[1] // 8), max(1, image.shape[0] // 8)),
                           interpolation=cv2.INTER_AREA)
        grey: npt.NDArray[np.uint8] = np.asarray(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), dtype=np.uint8)
        earlier = self._recent[0] if self._recent else None
        self._recent.append(grey)
        if earlier is None or earlier.shape != grey.shape:
            self._reference, self._still_for = grey, 0
            self.moving = self.reaching_in = False
            return False
        self.moving = bool(np.count_nonzero(cv2.absdiff(grey, earlier) > self.level)
                           > self.fraction * grey.size)
        reference = grey if self._reference is None else self._reference
        reaching_in = self._touches_edge(cv2.absdiff(grey, reference) > self.level)
        # Stillness counts from the last movement or the first frame of a change at the edge:
        # a fingertip coming in too slowly for the lag test must not become the reference.
        started_reaching = reaching_in and not self.reaching_in
        self._still_for = 0 if self.moving or started_reaching else self._still_for + 1
        if self._still_for >= self.accept_after or self._reference is None:
            self._reference, reaching_in = grey, False
        self.reaching_in = reaching_in
        return self.moving or self.reaching_in

    def _touches_edge(self, changed: npt.NDArray[np.bool_]) -> bool:
        """Is there a changed patch of at least ``edge_fraction`` of the picture touching its edge?"""
        if np.count_nonzero(changed) < self.edge_fraction * changed.size:
            return False
        count, labels, stats, _ = cv2.connectedComponentsWithStats(changed.astype(np.uint8), connectivity=8)
        height, width = changed.shape
        for label in range(1, count):
            x, y, w, h, area = stats[label]
            on_edge = x == 0 or y == 0 or x + w == width or y + h == height
            if on_edge and area >= self.edge_fraction * changed.size:
                return True
        return False


@contextmanager
def quiet_opencv() -> Iterator[None]:
    """OpenCV logs its own warnings when a camera or file will not open; we say it in one line.

    FFmpeg's log level is read from the environment when OpenCV first starts FFmpeg, so it is
    set (unless the user chose one) before the first capture and stays set.
    """
    os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")
    previous = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    try:
        yield
    finally:
        cv2.utils.logging.setLogLevel(previous)
