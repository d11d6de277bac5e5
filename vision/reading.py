"""Boards read from a stream of frames, and steadied by one tracker (`vision.tracking`).

* `InlineReading` reads each frame in turn, in the caller's thread: deterministic, for tests and
  for processing recordings.
* `BackgroundReading` (``--workers 1``) reads in one thread, always from the newest frame.
* `PoolReading` reads in several processes at once (one per core by default: reading is mostly
  Python-level work, which threads cannot spread over cores), each given the newest frame no
  other process is reading, and applies the boards to the tracker in frame order.

In the background, when reading is slower than the camera, frames are skipped rather than
queued, so the answer never falls behind the table.
"""

from __future__ import annotations

import math
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import cv2
import numpy as np

from core.board import Board
from vision.frames import Frame, Image, LiveError
from vision.tracking import BoardTracker, SteadyBoard

MAX_WORKERS = 4  # reading processes by default at most (about 90 MB each), whatever the cores


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
        return frame_rate(self._read_at)

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
            return frame_rate(self._read_at)

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
            return frame_rate(self._read_at)

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


def frame_rate(times: deque[float]) -> float:
    """Frames per second over the timestamps kept (perf_counter seconds, oldest first)."""
    if len(times) < 2 or times[-1] <= times[0]:
        return 0.0
    return (len(times) - 1) / (times[-1] - times[0])
