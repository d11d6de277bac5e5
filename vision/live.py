"""Live mode: camera frames in, steady SETs out, drawn on the picture as it moves.

Each frame shown: check whether the picture is moving (`MotionMeter`: a hand, the camera) ->
read the board (`vision.recognize`, the same path as photo mode; the command line reads with a
`StreamRecognizer`, which finds the cards only when the picture changed) and steady it
(`vision.tracking.BoardTracker`) -> draw it (`vision.overlay.draw_board`) and/or write it as a
JSON line (`vision.report.board_to_json`).

Frames come from a `vision.frames.FrameSource` (a camera, a video file, images in memory).
Two ways to run (`run_live`):

* **real time** (cameras; ``--realtime`` for a video): `vision.frames.LatestFrameReader` reads
  the camera in its own thread and keeps only the newest frame, and boards are read in the
  background (`vision.reading`: several processes, or one thread with ``--workers 1``). The
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
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, IO, Literal

import cv2

from core.board import Board
from vision.frames import Frame, FrameSource, Image, LatestFrameReader, LiveError, MotionMeter, quiet_opencv
from vision.overlay import draw_board
from vision.reading import (BackgroundReading, InlineReading, PoolReading, Recognise, default_workers,
                            frame_rate)
from vision.report import board_to_json, verdict_text
from vision.tracking import BoardTracker, SteadyBoard, TrackerSettings
from vision.window import Display

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
            with quiet_opencv():
                writer = cv2.VideoWriter(str(self.path), fourcc, self.fps, (image.shape[1], image.shape[0]))
            if not writer.isOpened():
                raise LiveError(f"cannot write video {self.path}; check the folder is writable")
            self._writer = writer
        self._writer.write(image)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.release()
            self._writer = None


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
            fps, reads_per_s = frame_rate(processed_at), reading.reads_per_s
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
