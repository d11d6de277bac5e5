"""Live mode: camera frames in, steady SETs out, drawn on the picture as it moves.

Each frame shown: check whether the picture is moving (`MotionMeter`: a hand, the camera) ->
read the board (`vision.recognize`, the same path as photo mode; the command line reads with a
`StreamRecognizer`, which finds the cards only when the picture changed) and steady it
(`vision.tracking.BoardTracker`) -> draw it (`vision.overlay.draw_board`) and/or write it as a
JSON line (`vision.report.board_to_json`).

Frames come from a `FrameSource`: `VideoSource` wraps `cv2.VideoCapture` (a camera index or a
video file; a video file stands in for a camera anywhere), `ArraySource` replays images held in
memory (tests, benchmarks).

Two ways to run (`run_live`):

* **real time** (cameras; ``--realtime`` for a video): `LatestFrameReader` reads the camera in
  its own thread and keeps only the newest frame, and boards are read in the background:
  `PoolReading` reads in several processes at once (one per core by default: reading is mostly
  Python-level work, which threads cannot spread over cores), each given the newest frame no
  other process is reading, and applies the boards to the one tracker in frame order;
  `BackgroundReading` (``--workers 1``) reads in one thread, always from the newest frame. The
  picture is shown at the camera's rate with the latest steady answer; when reading is slower
  than the camera, frames are skipped rather than queued, so the answer never falls behind the
  table.
* **every frame** (a video file): each frame is read and answered in turn, in the caller's
  thread: deterministic, for tests and for processing recordings.

Everything a user can fix raises `LiveError` with a one-line message; the command line turns it
into an error line and a non-zero exit.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, Protocol

import cv2
import numpy as np
import numpy.typing as npt

from core.board import Board
from vision.overlay import draw_board
from vision.report import board_to_json, verdict_text
from vision.tracking import BoardTracker, SteadyBoard, TrackerSettings

Image = npt.NDArray[np.uint8]

# A camera whose reads keep failing for this long is taken as unplugged.
DISCONNECT_AFTER_S = 2.0
CAMERA_SIZE = (960, 720)  # asked of a camera; it may pick the nearest size it supports
MAX_WORKERS = 4  # reading processes by default at most (about 90 MB each), whatever the cores
WINDOW_TITLE = "setfinder live (n/p: step SETs, a: all, h: hint, q: quit)"


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
        with _quiet_opencv():
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
        with _quiet_opencv():
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
            with _quiet_opencv():
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


ViewMode = Literal["all", "one", "hint"]


@dataclass
class SetView:
    """Which SETs to draw, steered by keys: ``n``/``p`` step through SETs one at a time, ``a``
    shows all, ``h`` marks one card of a SET only (press again for another SET's card)."""

    mode: ViewMode = "all"
    index: int = 0

    def press(self, key: str) -> None:
        if key == "a":
            self.mode = "all"
        elif key in ("n", "p"):
            if self.mode == "one":
                self.index += 1 if key == "n" else -1
            self.mode = "one"
        elif key == "h":
            if self.mode == "hint":
                self.index += 1
            self.mode = "hint"

    def choose(self, board: Board) -> tuple[list[tuple[int, int, int]], list[int], int | None, str]:
        """(SETs to draw, their colour numbers, hint card index or None, banner) for ``board``."""
        sets = board.sets()
        if self.mode == "all" or not sets:
            return sets, list(range(len(sets))), None, _verdict_banner(board)
        number = self.index % len(sets)
        triple = sets[number]
        ids = " ".join(str(i + 1) for i in triple)
        if self.mode == "one":
            return [triple], [number], None, f"SET {number + 1} of {len(sets)}: {ids}"
        return [], [], triple[0], f"Hint: card {triple[0] + 1} is in a SET"


def _verdict_banner(board: Board) -> str:
    if board.verdict == "no-set":
        return "No SET: deal three more"
    return verdict_text(board)


def annotate(image: Image, steady: SteadyBoard, view: SetView, fps: float,
             reads_per_s: float | None = None) -> Image:
    """The frame with the steady board drawn on it, a banner and a status line (frames shown
    per second and, when reading runs in the background, boards read per second)."""
    board = steady.board if steady.board is not None else _empty_board(image)
    sets, numbers, hint, banner = view.choose(board)
    if steady.status == "starting":
        banner = "Looking for cards..."
    elif steady.status == "hold-still":
        banner = "Hold still (showing the last steady answer)"
    rates = f"{fps:4.1f} fps" + (f" ({reads_per_s:.1f} reads/s)" if reads_per_s is not None else "")
    status = f"{rates} | {len(board.cards)} cards | {steady.seen} in view | {steady.status}"
    return draw_board(image, board, sets=sets, set_numbers=numbers, banner=banner, status=status,
                      hint=hint)


def frame_record(frame: Frame, steady: SteadyBoard, answer_from: Frame | None) -> dict[str, Any]:
    """One JSON line of ``--jsonl``: the frame, the frame its answer was read from (null before
    the first), the tracker's status, and the steady board in the `setfinder find --json`
    schema (an empty board before the first one settles)."""
    board = steady.board if steady.board is not None else _empty_board(frame.image)
    answer_frame = answer_from.index if answer_from is not None else None
    return {"frame": frame.index, "time": round(frame.time, 3), "answer_frame": answer_frame,
            "status": steady.status, "seen": steady.seen, "version": steady.version,
            **board_to_json(board)}


def _empty_board(image: Image) -> Board:
    return Board((), int(image.shape[1]), int(image.shape[0]))


# -- outputs --------------------------------------------------------------------------------------
class VideoRecorder:
    """Writes annotated frames to an MP4 (mp4v) or AVI (MJPG) file; opened on the first frame,
    when the frame size is known."""

    def __init__(self, path: str | Path, fps: float) -> None:
        self.path = Path(path)
        if self.path.suffix.lower() not in (".mp4", ".avi"):
            raise LiveError(f"--record {self.path}: the file must end in .mp4 or .avi")
        if not self.path.parent.is_dir():
            raise LiveError(f"--record {self.path}: folder {self.path.parent} does not exist")
        self.fps = fps
        self._writer: cv2.VideoWriter | None = None

    def write(self, image: Image) -> None:
        if self._writer is None:
            fourcc = cv2.VideoWriter.fourcc(*("MJPG" if self.path.suffix.lower() == ".avi" else "mp4v"))
            with _quiet_opencv():
                writer = cv2.VideoWriter(str(self.path), fourcc, self.fps, (image.shape[1], image.shape[0]))
            if not writer.isOpened():
                raise LiveError(f"cannot write video {self.path}; check the folder is writable")
            self._writer = writer
        self._writer.write(image)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.release()
            self._writer = None


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


@contextmanager
def _quiet_opencv() -> Iterator[None]:
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


# -- the loop -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LiveResult:
    """One processed frame: the frame, the steady answer shown with it, and timings.

    ``answer_from`` is the frame the answer was read from: the same frame when every frame is
    read in turn, an earlier one when reading runs in the background (None until the first
    board is read). ``latency_ms`` runs from that frame's arrival to its answer being out
    (drawn, written): how old the picture behind the shown answer is (NaN without one). ``process_ms`` is the time this frame took in the loop; ``fps`` the
    loop's rate and ``reads_per_s`` the rate of new answers, over the last second or so.
    """

    frame: Frame
    steady: SteadyBoard
    answer_from: Frame | None
    latency_ms: float
    process_ms: float
    fps: float
    reads_per_s: float


@dataclass
class LiveSummary:
    """How a run went: frames processed and skipped, boards read (and, with reading processes,
    boards dropped as older than one already shown), time taken, why it stopped. ``workers`` is
    the number of reading processes or threads (0: every frame read in the caller's thread)."""

    processed: int = 0
    skipped: int = 0
    reads: int = 0
    stale: int = 0
    workers: int = 0
    seconds: float = 0.0
    stopped_by: str = "end of video"
    last: SteadyBoard | None = None
    recent_latency_ms: deque[float] = field(default_factory=lambda: deque(maxlen=300))

    @property
    def fps(self) -> float:
        return self.processed / self.seconds if self.seconds > 0 else 0.0


class Recognise(Protocol):
    def read_board(self, image: Image) -> Board: ...


_STARTING = SteadyBoard(None, (), "starting", 0, False, 0)


class InlineReading:
    """Reads every frame handed to it, there and then: recognise, then steady the board."""

    def __init__(self, recognizer: Recognise, tracker: BoardTracker) -> None:
        self.recognizer = recognizer
        self.tracker = tracker
        self.reads = 0
        self._read_at: deque[float] = deque(maxlen=31)

    def answer(self, frame: Frame, moving: bool) -> tuple[SteadyBoard, Frame | None]:
        steady = self.tracker.update(self.recognizer.read_board(frame.image), scene_moving=moving)
        self.reads += 1
        self._read_at.append(time.perf_counter())
        _catch_up(self.recognizer)
        return steady, frame

    @property
    def reads_per_s(self) -> float:
        return _rate(self._read_at)

    def close(self) -> None:
        pass


class BackgroundReading:
    """Reads boards in a worker thread, always from the newest frame handed to it, while the
    caller goes on showing frames at the camera's rate with the latest steady answer.

    Reading a 960x720 frame can take longer than a camera frame lasts; this way the picture
    stays live and the answer follows as fast as the machine reads. Whether the picture moved
    is gathered from every frame shown (not only those read), so no hand is missed.
    """

    def __init__(self, recognizer: Recognise, tracker: BoardTracker) -> None:
        self.recognizer = recognizer
        self.tracker = tracker
        self.reads = 0
        self._read_at: deque[float] = deque(maxlen=31)
        self._pending: Frame | None = None
        self._moving = False
        self._latest: tuple[SteadyBoard, Frame] | None = None
        self._error: BaseException | None = None
        self._stop = False
        self._wake = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="setfinder-reader", daemon=True)
        self._thread.start()

    def answer(self, frame: Frame, moving: bool) -> tuple[SteadyBoard, Frame | None]:
        """Hand over ``frame`` (replacing any not yet read); return the latest answer and the
        frame it was read from (None before the first)."""
        with self._wake:
            if self._error is not None:
                raise self._error
            self._pending = frame
            self._moving = self._moving or moving
            self._wake.notify()
            return self._latest if self._latest is not None else (_STARTING, None)

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._pending is None and not self._stop:
                    self._wake.wait()
                if self._stop:
                    return
                frame, moving = self._pending, self._moving
                self._pending, self._moving = None, False
            assert frame is not None
            try:
                steady = self.tracker.update(self.recognizer.read_board(frame.image), scene_moving=moving)
                with self._wake:
                    self._latest = (steady, frame)
                    self.reads += 1
                    self._read_at.append(time.perf_counter())
                _catch_up(self.recognizer)  # once the answer is out
            except BaseException as error:  # noqa: BLE001 (raised again in the caller's thread)
                with self._wake:
                    self._error = error
                return

    @property
    def reads_per_s(self) -> float:
        with self._wake:
            return _rate(self._read_at)

    def close(self) -> None:
        with self._wake:
            self._stop = True
            self._wake.notify()
        self._thread.join(timeout=10.0)


def default_workers() -> int:
    """How many processes read boards in real time by default: one per core this process may
    use (`os.sched_getaffinity`, else `os.cpu_count`), at most `MAX_WORKERS` (each holds its
    own Python, NumPy and OpenCV: about 90 MB)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


@dataclass
class _Worker:
    """The parent's side of one reading process: its pipes, and the frame it is reading."""

    number: int
    process: Any  # multiprocessing.process.BaseProcess
    frames: Any  # Connection, parent -> worker: (index, shape) then the pixels
    results: Any  # Connection, worker -> parent: (kind, index, payload): kind "ready", "board",
    # "board, busy" (the board, then put-off work before the next "ready") or "error"; payload
    # None, the Board read, or the error's text
    ready: bool = False
    reading: Frame | None = None
    done: bool = False


class PoolReading:
    """Reads boards in ``workers`` processes at once (one per core), each always given the
    newest frame that no process is reading yet; answers go to the one tracker in frame order.

    Reading a 960x720 frame is mostly Python-level work, so threads would share one core (the
    GIL); processes use them all. Each process gets its own copy of ``recognizer`` (pickled
    once: the same `vision.recognize.Recognizer.read_board`, nothing of it copied here) and
    reads with one OpenCV thread. Processes are started with 'spawn' (a fork would copy the
    capture thread's locks mid-use) and ignore Ctrl+C, which the parent handles.

    Frames are handed over when a process is free: at `answer` (the newest frame), or as soon as
    a process finishes, if a newer frame arrived meanwhile; frames no process was free for are
    skipped. A process with work put off until after its answer (`StreamRecognizer.catch_up`)
    sends the board first and is free again once that work is done. Boards come back in any
    order: one read from a frame older than the last one applied is dropped (``stale``), so the
    tracker never steps back in time. Whether the picture moved is gathered from every frame
    shown since the last board applied.

    A process that fails (an exception in the reader, a crash, or it does not start) stops the
    run with a one-line `LiveError` at the next `answer`. `close` stops every process (asking,
    then terminating) and leaves none behind.

    'spawn' starts each process by importing the main module afresh: a script that reads in
    processes must keep its work under ``if __name__ == "__main__":`` (the ``setfinder``
    command does).
    """

    def __init__(self, recognizer: Recognise, tracker: BoardTracker, workers: int | None = None,
                 *, start_method: str = "spawn") -> None:
        workers = default_workers() if workers is None else workers
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.tracker = tracker
        self.workers = workers
        self.reads = 0
        self.stale = 0
        self._read_at: deque[float] = deque(maxlen=31)
        self._lock = threading.Lock()
        self._latest: tuple[SteadyBoard, Frame] | None = None
        self._applied = -1  # index of the newest frame whose board reached the tracker
        self._pending: Frame | None = None  # the newest frame not handed to any process yet
        self._moving: deque[int] = deque(maxlen=100_000)  # moving frames not yet covered by a board
        self._error: LiveError | None = None
        self._closing = False
        self.stop_timeout = 5.0  # seconds a process may take to finish its frame when asked to stop
        self.start_timeout = 120.0  # seconds for the first process to load its recogniser
        self._pool: list[_Worker] = []
        try:
            blob = pickle.dumps(recognizer)
        except Exception as error:  # noqa: BLE001 (any pickling failure means the same thing)
            raise LiveError(f"the card reader cannot be handed to reading processes ({error}); "
                            "use --workers 1") from None
        context = multiprocessing.get_context(start_method)
        self._wake_r, self._wake_w = os.pipe()
        try:
            with _interrupts_ignored():  # inherited by the processes from their first instant
                for number in range(1, workers + 1):
                    frames_r, frames_w = context.Pipe(duplex=False)
                    results_r, results_w = context.Pipe(duplex=False)
                    process = context.Process(target=_read_boards, args=(blob, frames_r, results_w),
                                              name=f"setfinder-reader-{number}", daemon=True)
                    self._pool.append(_Worker(number, process, frames_w, results_r))
                    process.start()
                    frames_r.close()
                    results_w.close()
        except OSError as error:
            self._stop_processes()
            raise LiveError(f"cannot start {workers} reading processes ({error.strerror or error}); "
                            "use --workers 1") from None
        except BaseException:
            self._stop_processes()
            raise
        self._started_at = time.perf_counter()
        self._thread = threading.Thread(target=self._collect, name="setfinder-pool", daemon=True)
        self._thread.start()

    @property
    def pids(self) -> list[int]:
        """Process ids of the reading processes (for benchmarks and tests)."""
        return [w.process.pid for w in self._pool if w.process.pid is not None]

    @property
    def started(self) -> int:
        """How many processes have loaded their recogniser and can read."""
        with self._lock:
            return sum(w.ready and not w.done for w in self._pool)

    @property
    def in_progress(self) -> list[int]:
        """Indices of the frames being read now, oldest first."""
        with self._lock:
            return sorted(w.reading.index for w in self._pool if w.reading is not None)

    def answer(self, frame: Frame, moving: bool) -> tuple[SteadyBoard, Frame | None]:
        """Hand over ``frame`` (to a free process now, or to the next one that finishes, unless a
        newer frame comes first); return the latest answer and the frame it was read from."""
        with self._lock:
            if self._error is None and self.reads == 0 and not any(w.ready for w in self._pool) \
                    and time.perf_counter() - self._started_at > self.start_timeout:
                self._error = LiveError(f"the reading processes did not start within {self.start_timeout:g} s; "
                                        "run again, or with --workers 1")
            if self._error is not None:
                raise self._error
            if moving:
                self._moving.append(frame.index)
            self._pending = frame
            handover = self._claim_locked()
            latest = self._latest
        if handover is not None:
            self._send(*handover)
        return latest if latest is not None else (_STARTING, None)

    @property
    def reads_per_s(self) -> float:
        with self._lock:
            return _rate(self._read_at)

    def _claim_locked(self) -> tuple[_Worker, Frame] | None:
        """A free process and the pending frame for it, marked as taken (the lock is held)."""
        if self._pending is None or self._closing:
            return None
        for worker in self._pool:
            if worker.ready and worker.reading is None and not worker.done:
                worker.reading, self._pending = self._pending, None
                return worker, worker.reading
        return None

    def _send(self, worker: _Worker, frame: Frame) -> None:
        image = np.ascontiguousarray(frame.image)
        try:
            worker.frames.send((frame.index, image.shape))
            worker.frames.send_bytes(image.reshape(-1))
        except OSError:
            pass  # the process is gone: the collector hears its pipe close and says why

    def _collect(self) -> None:
        """The pool's thread: waits for boards, applies them, hands free processes new frames."""
        try:
            while True:
                waiting = {w.results: w for w in self._pool if not w.done}
                if not waiting:
                    return
                ready = multiprocessing.connection.wait([*waiting, self._wake_r])
                if self._wake_r in ready:
                    return
                for connection in ready:
                    worker = waiting[connection]  # type: ignore[index]
                    try:
                        kind, index, payload = connection.recv()
                    except (EOFError, OSError):
                        worker.done = True
                        if not self._closing:
                            self._fail(self._crash_message(worker))
                        return
                    with self._lock:
                        handover = self._take_locked(worker, kind, index, payload)
                    if handover is not None:
                        self._send(*handover)
                    if kind == "error":
                        return
        except Exception as error:  # noqa: BLE001 (raised again in the caller's thread)
            self._fail(f"board reading stopped: {type(error).__name__}: {error}")

    def _take_locked(self, worker: _Worker, kind: str, index: int | None, payload: Any
                     ) -> tuple[_Worker, Frame] | None:
        """Deal with one message from ``worker`` (the lock is held)."""
        if kind == "ready":
            worker.ready = True
            return self._claim_locked()
        if kind == "error":
            worker.done = True
            where = f" on frame {index}" if index is not None else " while starting"
            self._error = self._error or LiveError(
                f"reading process {worker.number} failed{where}: {payload}")
            return None
        frame, worker.reading = worker.reading, None
        assert frame is not None and frame.index == index
        worker.ready = kind == "board"  # "board, busy": free again at its next "ready"
        if index <= self._applied:
            self.stale += 1  # a newer frame's board is already out: never step back
        else:
            moving = False
            while self._moving and self._moving[0] <= index:
                self._moving.popleft()
                moving = True
            steady = self.tracker.update(payload, scene_moving=moving)
            self._applied = index
            self._latest = (steady, frame)
            self.reads += 1
            self._read_at.append(time.perf_counter())
        return self._claim_locked()

    def _crash_message(self, worker: _Worker) -> str:
        worker.process.join(timeout=1.0)
        code = worker.process.exitcode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return (f"reading process {worker.number} stopped unexpectedly ({how}); "
                "run again, or with --workers 1")

    def _fail(self, message: str) -> None:
        with self._lock:
            self._error = self._error or LiveError(message)

    def close(self) -> None:
        """Stop the pool: the thread, then each process (asked to stop by closing its pipe,
        terminated if it does not within a few seconds). Safe to call twice."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
        os.write(self._wake_w, b"x")
        self._thread.join(timeout=10.0)
        self._stop_processes()

    def _stop_processes(self) -> None:
        for worker in self._pool:
            worker.frames.close()  # the process sees the end of its input and returns
        for worker in self._pool:
            process = worker.process
            if process.pid is None:
                continue
            process.join(timeout=self.stop_timeout)
            if process.exitcode is None:
                process.terminate()
                process.join(timeout=2.0)
            if process.exitcode is None:
                process.kill()
                process.join()
            worker.results.close()
            process.close()
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass


def _read_boards(blob: bytes, frames: Any, results: Any) -> None:
    """A reading process: load the recogniser once, then read each frame sent until the pipe
    closes. Runs in the child; every failure becomes one ("error", frame index, text) message."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    cv2.setNumThreads(1)
    index: int | None = None
    try:
        try:
            recognizer = pickle.loads(blob)
        except Exception as error:  # noqa: BLE001
            results.send(("error", None, f"{type(error).__name__}: {error}"))
            return
        results.send(("ready", None, None))
        while True:
            try:
                index, shape = frames.recv()
            except EOFError:
                return
            pixels = bytearray(math.prod(shape))
            frames.recv_bytes_into(pixels)
            image = np.frombuffer(pixels, np.uint8).reshape(shape)
            try:
                board = recognizer.read_board(image)
            except Exception as error:  # noqa: BLE001
                results.send(("error", index, f"{type(error).__name__}: {error}"))
                return
            if not getattr(recognizer, "put_off", False):
                results.send(("board", index, board))
                continue
            # Answer first, then do the put-off work, and only then take another frame: one
            # sent meanwhile would wait here while another process may be free.
            results.send(("board, busy", index, board))
            try:
                _catch_up(recognizer)
            except Exception as error:  # noqa: BLE001
                results.send(("error", index, f"{type(error).__name__}: {error}"))
                return
            results.send(("ready", None, None))
    except (EOFError, OSError):
        return  # the parent has gone or closed the pool


def _catch_up(recognizer: Recognise) -> None:
    """Work the recogniser put off until its answer was out (`StreamRecognizer.catch_up`: the
    periodic search of a still table), done while the answer is being shown."""
    catch_up = getattr(recognizer, "catch_up", None)
    if catch_up is not None:
        catch_up()


@contextmanager
def _interrupts_ignored() -> Iterator[None]:
    """Ctrl+C ignored while child processes start (they inherit it; only the main thread may
    change it, elsewhere this does nothing)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run_live(source: FrameSource, recognizer: Recognise, *, tracker: BoardTracker | None = None,
             window: Display | None = None, recorder: VideoRecorder | None = None,
             jsonl: IO[str] | None = None, realtime: bool | None = None,
             max_frames: int | None = None, motion: MotionMeter | None = None,
             on_result: Callable[[LiveResult], None] | None = None,
             workers: int | None = None) -> LiveSummary:
    """Process frames from ``source`` until it ends, the user quits, or ``max_frames``.

    ``realtime`` (default: only for cameras): frames come from a background thread that keeps
    only the newest one (skipping frames rather than falling behind the camera), and boards
    are read in the background from the newest frame, by ``workers`` processes at once
    (`PoolReading`; default `default_workers`, one per core) or, with ``workers=1``, by one
    thread of this process (`BackgroundReading`); the picture is shown at the camera's rate
    with the latest steady answer. Otherwise every frame is read and answered in order, in
    this thread, which is deterministic (tests, a video file); ``workers`` is then unused.
    The source, recorder, window and reading processes are closed on the way out, also when
    an error is raised. Raises `LiveError` when the camera stops delivering frames or a
    reading process fails.
    """
    # The tracker judges uncertainty by the reader's own thresholds when the recogniser says
    # them (any `Recognizer` or `StreamRecognizer` does).
    tracker = tracker or BoardTracker(TrackerSettings(thresholds=getattr(recognizer, "thresholds", None)))
    motion = motion or MotionMeter()
    view = SetView()
    realtime = source.is_camera if realtime is None else realtime
    workers = default_workers() if workers is None else workers
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    summary = LiveSummary(workers=workers if realtime else 0)
    reading: InlineReading | BackgroundReading | PoolReading
    try:
        if not realtime:
            reading = InlineReading(recognizer, tracker)
        elif workers == 1:
            reading = BackgroundReading(recognizer, tracker)
        else:
            reading = PoolReading(recognizer, tracker, workers)
    except BaseException:
        source.close()
        raise
    try:
        frames: FrameSource = LatestFrameReader(source, None if source.is_camera else source.fps) \
            if realtime else source
    except BaseException:
        reading.close()
        source.close()
        raise
    processed_at: deque[float] = deque(maxlen=31)
    started = time.perf_counter()
    try:
        while max_frames is None or summary.processed < max_frames:
            frame = frames.read()
            if frame is None:
                summary.stopped_by = "end of video"
                break
            begun = time.perf_counter()
            steady, answer_from = reading.answer(frame, motion.update(frame.image))
            fps, reads_per_s = _rate(processed_at), reading.reads_per_s
            key = None
            if window is not None or recorder is not None:
                annotated = annotate(frame.image, steady, view, fps, reads_per_s if realtime else None)
                if recorder is not None:
                    recorder.write(annotated)
                if window is not None:
                    key = window.show(annotated)
            if jsonl is not None:
                jsonl.write(json.dumps(frame_record(frame, steady, answer_from)) + "\n")
                jsonl.flush()
            done = time.perf_counter()
            processed_at.append(done)
            summary.processed += 1
            summary.last = steady
            latency_ms = math.nan
            if answer_from is not None:
                latency_ms = (done - answer_from.captured_at) * 1000.0
                summary.recent_latency_ms.append(latency_ms)
            if on_result is not None:
                on_result(LiveResult(frame, steady, answer_from, latency_ms, (done - begun) * 1000.0,
                                     fps, reads_per_s))
            if key in ("q", "esc", "closed"):
                summary.stopped_by = "window closed" if key == "closed" else "quit"
                break
            if key:
                view.press(key)
        else:
            summary.stopped_by = "frame limit"
    finally:
        summary.seconds = time.perf_counter() - started
        summary.skipped = frames.skipped if isinstance(frames, LatestFrameReader) else 0
        reading.close()
        summary.reads = reading.reads
        summary.stale = reading.stale if isinstance(reading, PoolReading) else 0
        frames.close()
        if recorder is not None:
            recorder.close()
        if window is not None:
            window.close()
    return summary


def _rate(times: deque[float]) -> float:
    """Frames per second over the timestamps kept (perf_counter seconds, oldest first)."""
    if len(times) < 2 or times[-1] <= times[0]:
        return 0.0
    return (len(times) - 1) / (times[-1] - times[0])
