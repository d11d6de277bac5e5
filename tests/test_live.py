"""Live mode's loop, sources, outputs and command line, headless.

Most tests stand a scripted recogniser in for the real one: it hands out, frame by frame, the
noisy boards a recogniser would read from a known table (see test_tracking), so the loop's
plumbing (JSON lines, recording, ends, faults, frame skipping) is tested exactly and fast.
Reading in several processes (`PoolReading`) is tested with recognisers that read a frame only
when the test releases it, so the order of events is the test's, not the machine's. The
end-to-end tests at the bottom run the real recogniser on a generated video, also through the
reading processes.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from core.board import Board
from core.cards import Card
from setfinder.cli import main
from test_tracking import layout, noisy_board, truth_sets
from vision.frames import ArraySource, Frame, LatestFrameReader, LiveError, MotionMeter, VideoSource
from vision.live import SetView, VideoRecorder, annotate, frame_record, run_live
from vision.reading import PoolReading
from vision.report import board_to_json
from vision.tracking import BoardTracker, SteadyBoard

SMALL = (120, 160, 3)  # frames for plumbing tests: small, so encoding and decoding are quick


class ScriptedRecognizer:
    """Returns the given boards one per call, in order (the loop reads each frame once)."""

    def __init__(self, boards: list[Board]) -> None:
        self.boards = iter(boards)
        self.calls = 0

    def read_board(self, image: Any) -> Board:
        self.calls += 1
        return next(self.boards)


def table_frames(n: int, seed: int = 0) -> list[np.ndarray]:
    """``n`` plain small frames of a green felt table with a little sensor noise (nothing moves)."""
    rng = np.random.default_rng(seed)
    base = np.empty(SMALL, np.uint8)
    base[:] = (70, 100, 60)
    return [np.clip(base + rng.integers(-3, 4, SMALL), 0, 255).astype(np.uint8) for _ in range(n)]


def game_script(seed: int = 1) -> tuple[list[Board], dict[int, Card], dict[int, Card]]:
    """60 frames of a 12-card table, then 60 with three cards (slots 0, 5, 10) taken."""
    rng = random.Random(seed)
    table = layout()
    remaining = {slot: card for slot, card in table.items() if slot not in (0, 5, 10)}
    boards = [noisy_board(table, rng) for _ in range(60)] + [noisy_board(remaining, rng) for _ in range(60)]
    return boards, table, remaining


def record_sets(record: dict[str, Any]) -> set[frozenset[Card]]:
    by_id = {card["id"]: Card.from_attributes(count=card["count"], color=card["color"],
                                             shading=card["shading"], shape=card["shape"])
             for card in record["cards"]}
    return {frozenset(by_id[i] for i in triple) for triple in record["sets"]}


def test_headless_run_writes_one_steady_record_per_frame(tmp_path: Path) -> None:
    boards, table, remaining = game_script()
    out = tmp_path / "answers.jsonl"
    with out.open("w") as jsonl:
        summary = run_live(ArraySource(table_frames(len(boards))), ScriptedRecognizer(boards), jsonl=jsonl)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert summary.processed == len(records) == 120 and summary.stopped_by == "end of video"
    assert [r["frame"] for r in records] == list(range(120))
    assert records[30]["time"] == pytest.approx(1.0)
    assert records[0]["status"] == "starting" and records[0]["cards"] == []
    assert set(records[59]) == {"frame", "time", "answer_frame", "status", "seen", "version"} | set(board_to_json(boards[0]))
    assert all(r["answer_frame"] == r["frame"] for r in records)  # every frame read in turn
    assert record_sets(records[59]) == truth_sets(table)
    arrived = next(i for i in range(60, 120) if len(records[i]["cards"]) == 9)
    assert arrived - 60 < 15
    assert all(record_sets(r) == truth_sets(remaining) for r in records[arrived:])
    assert records[-1]["verdict"] == ("sets" if truth_sets(remaining) else "no-set")


def test_recording_writes_every_annotated_frame(tmp_path: Path) -> None:
    boards, _, _ = game_script()
    out = tmp_path / "game.avi"
    run_live(ArraySource(table_frames(40)), ScriptedRecognizer(boards[:40]),
             recorder=VideoRecorder(out, fps=30.0))
    capture = cv2.VideoCapture(str(out))
    frames = []
    while True:
        ok, image = capture.read()
        if not ok:
            break
        frames.append(image)
    capture.release()
    assert len(frames) == 40 and frames[0].shape == SMALL
    # The banner darkens the top of the picture: the recording is annotated, not raw.
    assert frames[-1][:10].mean() < 60 < frames[-1][60].mean()


class ScriptedDisplay:
    """A window stand-in: keeps what it was shown and answers with scripted key presses."""

    def __init__(self, keys: list[str | None]) -> None:
        self.keys = iter(keys)
        self.shown: list[np.ndarray] = []
        self.closed = False

    def show(self, image: np.ndarray) -> str | None:
        self.shown.append(image)
        return next(self.keys, None)

    def close(self) -> None:
        self.closed = True


def test_keys_steer_the_view_and_q_quits() -> None:
    boards, _, _ = game_script()
    display = ScriptedDisplay([None] * 20 + ["n", None, "a", "q", None])
    summary = run_live(ArraySource(table_frames(60)), ScriptedRecognizer(boards), window=display)
    assert summary.stopped_by == "quit" and summary.processed == 24 and display.closed
    # A key pressed while frame k is shown changes frame k + 1: the banner says "SET 1 of N"
    # on frames 21 and 22, then all SETs again on frame 23.
    banners = [image[:14].astype(np.int16) for image in display.shown]

    def differ(a: int, b: int) -> float:
        return float(np.abs(banners[a] - banners[b]).mean())

    assert differ(20, 23) < 2 < differ(20, 21)
    assert differ(21, 22) < 2


def test_closing_the_window_ends_the_run() -> None:
    boards, _, _ = game_script()
    summary = run_live(ArraySource(table_frames(30)), ScriptedRecognizer(boards),
                       window=ScriptedDisplay([None, None, "closed"]))
    assert summary.stopped_by == "window closed" and summary.processed == 3


def test_recording_refuses_an_unknown_container(tmp_path: Path) -> None:
    with pytest.raises(LiveError, match=r"\.mp4 or \.avi"):
        VideoRecorder(tmp_path / "game.gif", fps=30.0)
    with pytest.raises(LiveError, match="does not exist"):
        VideoRecorder(tmp_path / "missing" / "game.mp4", fps=30.0)


def write_video(path: Path, frames: list[np.ndarray], fps: float = 30.0) -> None:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), fps, (frames[0].shape[1], frames[0].shape[0]))
    for frame in frames:
        writer.write(frame)
    writer.release()


def test_a_video_file_is_read_frame_by_frame_to_its_end(tmp_path: Path) -> None:
    path = tmp_path / "table.avi"
    write_video(path, table_frames(25), fps=25.0)
    source = VideoSource.open_video(path)
    frames = list(iter(source.read, None))
    source.close()
    assert [f.index for f in frames] == list(range(25))
    assert frames[-1].time == pytest.approx(24 / 25.0)
    assert frames[0].image.shape == SMALL and frames[0].image.dtype == np.uint8


def test_unreadable_videos_are_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(LiveError, match="not found"):
        VideoSource.open_video(tmp_path / "missing.mp4")
    junk = tmp_path / "junk.mp4"
    junk.write_text("this is not a video\n")
    with pytest.raises(LiveError, match="cannot read video"):
        source = VideoSource.open_video(junk)
        source.read()


class FakeCamera:
    """A capture that gives ``frames`` pictures, then fails every read (unplugged)."""

    def __init__(self, frames: int) -> None:
        self.left = frames
        self.released = False

    def read(self) -> tuple[bool, Any]:
        if self.left <= 0:
            return False, None
        self.left -= 1
        return True, np.full(SMALL, 100, np.uint8)

    def get(self, prop: int) -> float:
        return 30.0 if prop == cv2.CAP_PROP_FPS else 0.0

    def isOpened(self) -> bool:  # noqa: N802 (OpenCV's name)
        return True

    def release(self) -> None:
        self.released = True


def test_a_camera_that_stops_delivering_frames_is_reported_disconnected() -> None:
    camera = FakeCamera(frames=8)
    source = VideoSource(camera, name="camera 0", is_camera=True, disconnect_after=0.1)
    boards, _, _ = game_script()
    with pytest.raises(LiveError, match=r"camera 0 disconnected .* after 8 frames"):
        run_live(source, ScriptedRecognizer(boards))
    assert camera.released


def test_a_camera_that_never_gives_a_picture_is_reported() -> None:
    source = VideoSource(FakeCamera(frames=0), name="camera 0", is_camera=True, disconnect_after=0.1)
    with pytest.raises(LiveError, match="camera 0 opened but gave no picture"):
        run_live(source, ScriptedRecognizer([]))


def test_a_camera_that_does_not_open_is_refused_in_one_line() -> None:
    with pytest.raises(LiveError, match="camera 99 did not open"):
        VideoSource.open_camera(99)


def test_a_slow_consumer_gets_the_newest_frames_and_skips_the_rest() -> None:
    images = table_frames(60)
    reader = LatestFrameReader(ArraySource(images, fps=300.0), pace_fps=300.0)
    seen = []
    while (frame := reader.read()) is not None:
        seen.append(frame.index)
        time.sleep(0.02)  # much slower than the 300 frames per second arriving
    reader.close()
    assert seen == sorted(seen) and len(set(seen)) == len(seen)
    assert len(seen) < 40 and reader.skipped == 60 - len(seen)
    assert seen[-1] >= 55  # the end of the stream is reached, not left queued


def test_realtime_run_shows_frames_at_camera_rate_and_reads_the_newest() -> None:
    boards = game_script()[0] * 3

    class SlowRecognizer(ScriptedRecognizer):
        def read_board(self, image: Any) -> Board:
            time.sleep(0.02)  # 50 boards per second at best, against 200 frames arriving
            return super().read_board(image)

    results = []
    summary = run_live(ArraySource(table_frames(150), fps=200.0), SlowRecognizer(boards), realtime=True,
                       on_result=results.append, workers=1)
    assert summary.processed + summary.skipped == 150
    assert 0 < summary.reads < summary.processed  # the picture did not wait for the reader
    answered = [r.answer_from.index for r in results if r.answer_from is not None]
    assert all(r.answer_from.index <= r.frame.index for r in results if r.answer_from is not None)
    assert answered == sorted(answered)
    assert max(summary.recent_latency_ms) < 300  # never a queue of old frames
    assert results[-1].steady.board is not None


def test_a_reader_failure_in_the_background_reaches_the_caller() -> None:
    class BrokenRecognizer:
        def read_board(self, image: Any) -> Board:
            raise RuntimeError("model exploded")

    with pytest.raises(RuntimeError, match="model exploded"):
        run_live(ArraySource(table_frames(200), fps=200.0), BrokenRecognizer(), realtime=True, workers=1)
    time.sleep(0.05)
    assert not any(t.name.startswith("setfinder-") for t in threading.enumerate())



# -- reading in several processes (PoolReading) ----------------------------------------------------
# The recognisers below are module-level classes so that they can be sent to the reading processes.
# The tests wait for events (a board applied, a process gone) with generous deadlines; none
# depends on how fast anything runs.
def numbered_frames(n: int) -> list[Frame]:
    """``n`` small frames with their index written into the first pixel."""
    frames = []
    for index in range(n):
        image = np.full(SMALL, 90, np.uint8)
        image[0, 0, 0] = index
        frames.append(Frame(index, index / 30.0, image, time.perf_counter()))
    return frames


class GatedRecognizer:
    """Reads frame k (its first pixel) only once the file ``go-k`` exists in ``folder``; the board
    is empty, ``k`` pixels wide, so the order in which boards arrive is the test's to choose."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def read_board(self, image: np.ndarray) -> Board:
        index = int(image[0, 0, 0])
        deadline = time.monotonic() + 120.0
        while not (self.folder / f"go-{index}").exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"frame {index} was never released")
            time.sleep(0.005)
        return Board((), index, image.shape[0])


class PuttingOffRecognizer(GatedRecognizer):
    """A `GatedRecognizer` that, after frame 0's board, has work put off (as
    `StreamRecognizer`'s periodic search) which ends only once the file ``caught-up`` exists."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.put_off = False

    def read_board(self, image: np.ndarray) -> Board:
        board = super().read_board(image)
        self.put_off = int(image[0, 0, 0]) == 0
        return board

    def catch_up(self) -> bool:
        if not self.put_off:
            return False
        wait_until(lambda: (self.folder / "caught-up").exists(), "the test to end the put-off work")
        self.put_off = False
        return True


class CrashingRecognizer:
    """Kills its process on the first frame, as a crash in native code would."""

    def read_board(self, image: np.ndarray) -> Board:
        import os

        os._exit(3)


class FailingRecognizer:
    def read_board(self, image: np.ndarray) -> Board:
        raise RuntimeError("model exploded")


class RecordingTracker:
    """A tracker stand-in (or wrapper) that keeps each board it is given and the motion flag."""

    def __init__(self, inner: BoardTracker | None = None) -> None:
        self.inner = inner
        self.updates: list[tuple[Board, bool]] = []
        self.answers: list[SteadyBoard] = []

    def update(self, board: Board, scene_moving: bool = False) -> SteadyBoard:
        self.updates.append((board, scene_moving))
        steady = self.inner.update(board, scene_moving=scene_moving) if self.inner else \
            SteadyBoard(board, (), "steady", len(self.updates), True, 0)
        self.answers.append(steady)
        return steady


def wait_until(condition: Any, what: str, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def child_pids() -> set[int]:
    """Processes whose parent is this one (Linux /proc)."""
    pids: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        pids |= {int(word) for word in (task / "children").read_text().split()}
    return pids


def is_running(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    try:
        return "\nState:\tZ" not in status.read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False


needs_proc_children = pytest.mark.skipif(not Path(f"/proc/self/task/{threading.get_native_id()}/children").exists(),
                                         reason="needs Linux /proc/<pid>/task/<tid>/children")


def test_pool_reads_the_newest_frames_and_applies_boards_in_frame_order(tmp_path: Path) -> None:
    tracker = RecordingTracker()
    pool = PoolReading(GatedRecognizer(tmp_path), tracker, workers=2)  # type: ignore[arg-type]
    frames = numbered_frames(6)
    try:
        wait_until(lambda: pool.started == 2, "both processes to start")
        assert pool.answer(frames[0], moving=True)[1] is None  # no board read yet
        pool.answer(frames[1], moving=False)
        assert pool.in_progress == [0, 1]  # a free process takes the newest frame at once
        pool.answer(frames[2], moving=True)  # both busy: waits for a free process ...
        pool.answer(frames[3], moving=False)  # ... and is replaced by a newer frame (2 is skipped)
        (tmp_path / "go-1").touch()
        wait_until(lambda: pool.reads == 1 and pool.in_progress == [0, 3], "frame 1's board, then frame 3 handed over")
        steady, answer_from = pool.answer(frames[4], moving=False)  # no process free: pending
        assert answer_from is frames[1] and steady.board is not None and steady.board.width == 1
        (tmp_path / "go-0").touch()  # frame 0 is read after frame 1's board is out: dropped
        wait_until(lambda: pool.stale == 1 and pool.in_progress == [3, 4], "frame 0's board dropped, frame 4 handed over")
        (tmp_path / "go-4").touch()
        wait_until(lambda: pool.reads == 2, "frame 4's board")
        (tmp_path / "go-3").touch()  # older than 4: dropped
        wait_until(lambda: pool.stale == 2 and pool.in_progress == [], "frame 3's board dropped")
        steady, answer_from = pool.answer(frames[5], moving=False)
        assert answer_from is frames[4]
    finally:
        pool.close()
    # Boards reach the tracker in frame order, never an older one after a newer; the motion
    # seen in every frame since the last board applied comes with the next (frame 2 moved).
    assert [(board.width, moving) for board, moving in tracker.updates] == [(1, True), (4, True)]
    assert pool.reads == 2 and pool.stale == 2


def test_a_process_doing_put_off_work_gets_no_frame_until_it_is_done(tmp_path: Path) -> None:
    tracker = RecordingTracker()
    pool = PoolReading(PuttingOffRecognizer(tmp_path), tracker, workers=2)  # type: ignore[arg-type]
    frames = numbered_frames(4)
    try:
        wait_until(lambda: pool.started == 2, "both processes to start")
        pool.answer(frames[0], moving=False)
        (tmp_path / "go-0").touch()  # read, answered, then busy with the put-off work
        wait_until(lambda: pool.reads == 1, "frame 0's board, sent before the put-off work")
        pool.answer(frames[1], moving=False)
        assert pool.in_progress == [1]  # the other process takes it
        pool.answer(frames[2], moving=False)  # neither is free: frame 2 waits ...
        time.sleep(0.2)
        assert pool.in_progress == [1]  # ... not queued behind the put-off work
        (tmp_path / "caught-up").touch()
        wait_until(lambda: pool.in_progress == [1, 2], "frame 2 handed over once the work is done")
        for index in (1, 2):
            (tmp_path / f"go-{index}").touch()
            wait_until(lambda: pool.reads == index + 1, f"frame {index}'s board")
    finally:
        pool.close()
    assert [board.width for board, _ in tracker.updates] == [0, 1, 2] and pool.stale == 0


@needs_proc_children
def test_pool_close_leaves_no_process_behind_even_one_stuck_in_a_frame(tmp_path: Path) -> None:
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()  # multiprocessing's own helper, one per program, shared
    before = child_pids()
    pool = PoolReading(GatedRecognizer(tmp_path), RecordingTracker(), workers=2)  # type: ignore[arg-type]
    pids = pool.pids
    assert len(pids) == 2 and set(pids) <= child_pids() - before
    frames = numbered_frames(2)
    wait_until(lambda: pool.started == 2, "both processes to start")
    pool.answer(frames[0], moving=False)
    assert pool.in_progress == [0]  # never released: stuck in the frame
    pool.stop_timeout = 0.2
    pool.close()
    pool.close()  # closing twice is harmless
    assert not any(is_running(pid) for pid in pids)
    assert child_pids() == before
    assert not any(t.name.startswith("setfinder-") for t in threading.enumerate())


@needs_proc_children
def test_a_realtime_run_with_reading_processes_answers_in_order_and_leaves_nothing_behind() -> None:
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    before = child_pids()
    boards = game_script()[0] * 3  # each process has its own copy of the script
    results = []
    summary = run_live(ArraySource(table_frames(150), fps=200.0), ScriptedRecognizer(boards), realtime=True,
                       on_result=results.append, workers=2)
    assert summary.processed + summary.skipped == 150 and summary.workers == 2
    answered = [r.answer_from.index for r in results if r.answer_from is not None]
    assert answered == sorted(answered)
    assert all(r.answer_from.index <= r.frame.index for r in results if r.answer_from is not None)
    assert child_pids() == before
    assert not any(t.name.startswith("setfinder-") for t in threading.enumerate())


def test_a_crashing_reading_process_stops_the_run_with_one_line() -> None:
    source = ArraySource(table_frames(5), fps=200.0, loops=None)  # runs until the crash is seen
    with pytest.raises(LiveError, match=r"^reading process [12] stopped unexpectedly \(exit code 3\); "
                                        r"run again, or with --workers 1$"):
        run_live(source, CrashingRecognizer(), realtime=True, workers=2)  # type: ignore[arg-type]
    assert not any(t.name.startswith("setfinder-") for t in threading.enumerate())


def test_a_killed_reading_process_is_reported(tmp_path: Path) -> None:
    import os
    import signal

    pool = PoolReading(GatedRecognizer(tmp_path), RecordingTracker(), workers=2)  # type: ignore[arg-type]
    try:
        os.kill(pool.pids[1], signal.SIGKILL)
        frame = numbered_frames(1)[0]

        def reported() -> bool:
            try:
                pool.answer(frame, moving=False)
            except LiveError as error:
                assert str(error).startswith("reading process 2 stopped unexpectedly (killed by signal 9)")
                return True
            return False

        wait_until(reported, "the kill to be reported")
    finally:
        pool.close()


def test_a_reader_error_in_a_process_is_one_line_naming_the_frame() -> None:
    source = ArraySource(table_frames(5), fps=200.0, loops=None)
    with pytest.raises(LiveError, match=r"^reading process [12] failed on frame \d+: RuntimeError: model exploded$"):
        run_live(source, FailingRecognizer(), realtime=True, workers=2)  # type: ignore[arg-type]


def test_a_reader_that_cannot_go_to_processes_says_use_one_worker() -> None:
    class LocalRecognizer:  # defined in a function: cannot be pickled
        def read_board(self, image: Any) -> Board:
            raise AssertionError("never called")

    with pytest.raises(LiveError, match="use --workers 1"):
        run_live(ArraySource(table_frames(5)), LocalRecognizer(), realtime=True, workers=2)


def test_motion_meter_ignores_sensor_noise_and_sees_a_hand() -> None:
    meter = MotionMeter()
    rng = np.random.default_rng(0)
    table = np.full((720, 960, 3), 80, np.uint8)
    assert meter.update(table) is False  # nothing to compare with yet
    for _ in range(5):
        noisy = np.clip(table.astype(np.int16) + rng.normal(0, 6, table.shape), 0, 255).astype(np.uint8)
        assert meter.update(noisy) is False
    hand = noisy.copy()
    cv2.circle(hand, (300, 500), 120, (140, 170, 220), -1)
    assert meter.update(hand) is True
    # The hand stays: the picture counts as moving until the hand is in every frame kept.
    assert [meter.update(hand) for _ in range(6)] == [True, True, True, True, False, False]


def test_motion_meter_adds_up_slow_movement() -> None:
    """A blob creeping 3 pixels a frame (too little to see between two frames) is movement."""
    meter = MotionMeter()
    frames = []
    for step in range(12):
        image = np.full((720, 960, 3), 80, np.uint8)
        cv2.rectangle(image, (200 + 3 * step, 200), (500 + 3 * step, 500), (200, 200, 200), -1)
        frames.append(image)
    moving = [meter.update(image) for image in frames]
    assert not any(moving[:1]) and all(moving[5:])
    assert MotionMeter(lag=1).update(frames[0]) is False and not _moves_between(frames[5], frames[6])


def test_motion_meter_sees_a_hand_resting_over_the_edge_but_not_a_card_taken() -> None:
    meter = MotionMeter(accept_after=30)
    table = np.full((720, 960, 3), 80, np.uint8)
    cv2.rectangle(table, (400, 300), (480, 420), (230, 230, 230), -1)  # a card
    for _ in range(10):
        meter.update(table)
    card_taken = np.full((720, 960, 3), 80, np.uint8)
    arm = card_taken.copy()
    cv2.rectangle(arm, (420, 500), (520, 719), (120, 160, 210), -1)  # an arm in from the bottom
    resting = [meter.update(arm) for _ in range(30)]
    assert all(resting) and meter.reaching_in and not meter.moving
    later = [meter.update(arm) for _ in range(10)]
    assert not any(later[6:])  # a lasting change is accepted after accept_after still frames
    meter = MotionMeter()
    for _ in range(10):
        meter.update(table)
    after = [meter.update(card_taken) for _ in range(10)]
    assert not any(after[5:]) and not meter.reaching_in  # only the lag test saw the change


def test_motion_meter_takes_no_fingertip_at_the_edge_for_the_still_table() -> None:
    """A fingertip coming in over the edge of a long-still table, too small for the lag test, is
    reaching in; and once it has gone the table is still at once (the fingertip never became
    part of the reference picture, to show up as a change when it leaves)."""
    meter = MotionMeter(accept_after=30)
    table = np.full((720, 960, 3), 80, np.uint8)
    cv2.rectangle(table, (400, 300), (480, 420), (230, 230, 230), -1)  # a card
    for _ in range(40):
        meter.update(table)
    fingertip = table.copy()
    cv2.rectangle(fingertip, (440, 656), (520, 719), (120, 160, 210), -1)  # 0.7% of the picture
    touching = [meter.update(fingertip) for _ in range(10)]
    assert all(touching[5:]) and meter.reaching_in and not meter.moving
    gone = [meter.update(table) for _ in range(10)]
    assert not any(gone[5:]) and not meter.reaching_in


def test_motion_meter_sees_a_card_pushed_in_over_the_edge() -> None:
    """A dealt card slid in from the edge, its hand still out of the picture, changes a patch
    of 0.3% of the picture (white paper over white paper changes even less): reaching in, so
    the cards it covers are not read as if the table were still."""
    meter = MotionMeter()
    table = np.full((720, 960, 3), 80, np.uint8)
    for _ in range(10):
        meter.update(table)
    pushed = table.copy()
    cv2.rectangle(pushed, (440, 684), (500, 719), (230, 230, 230), -1)  # 60 x 35 px of card
    assert all(meter.update(pushed) for _ in range(5)) and meter.reaching_in and not meter.moving


def _moves_between(a: np.ndarray, b: np.ndarray) -> bool:
    meter = MotionMeter(lag=1)
    meter.update(a)
    return meter.update(b)


def test_set_view_steps_through_sets_and_hints_one_card() -> None:
    table = layout()
    board = noisy_board(table, random.Random(0), misread_rate=0.0, miss_rate=0.0, jitter=0.0)
    board = Board(tuple(sorted(board.cards, key=lambda s: (s.center[1], s.center[0]))), board.width, board.height)
    sets = board.sets()
    assert len(sets) >= 2
    view = SetView()
    drawn, numbers, hint, banner = view.choose(board)
    assert drawn == sets and numbers == list(range(len(sets))) and hint is None
    view.press("n")
    assert view.choose(board)[:3] == ([sets[0]], [0], None)
    view.press("n")
    drawn, numbers, _, banner = view.choose(board)
    assert drawn == [sets[1]] and numbers == [1] and banner.startswith(f"SET 2 of {len(sets)}")
    view.press("p")
    view.press("p")
    assert view.choose(board)[:2] == ([sets[-1]], [len(sets) - 1])
    view.press("h")
    drawn, _, hint, banner = view.choose(board)
    assert drawn == [] and hint == sets[-1][0] and banner == f"Hint: card {hint + 1} is in a SET"
    view.press("a")
    assert view.choose(board)[0] == sets


def test_no_set_board_says_deal_three_more() -> None:
    cards = [Card.parse(t) for t in ("1 red solid oval", "2 red solid oval", "3 purple solid oval")]
    table = dict(enumerate(cards))
    board = noisy_board(table, random.Random(0), misread_rate=0.0, miss_rate=0.0)
    assert SetView().choose(board)[3] == "No SET: deal three more"


def test_annotate_draws_the_board_and_says_hold_still() -> None:
    board = noisy_board(layout(), random.Random(0), misread_rate=0.0, miss_rate=0.0)
    image = np.full((720, 960, 3), 90, np.uint8)
    steady = SteadyBoard(board, tuple(range(12)), "steady", 1, False, 12)
    drawn = annotate(image, steady, SetView(), fps=31.0)
    held = annotate(image, SteadyBoard(board, tuple(range(12)), "hold-still", 1, False, 4), SetView(), 31.0)
    assert drawn.shape == image.shape and not np.array_equal(drawn, image)
    assert not np.array_equal(drawn[:40], held[:40])  # a different banner
    assert np.array_equal(drawn[200:600, 200:700], held[200:600, 200:700])  # the same board


def test_frame_record_before_the_first_steady_board_is_an_empty_board() -> None:
    source = ArraySource(table_frames(1))
    frame = source.read()
    assert frame is not None
    record = frame_record(frame, SteadyBoard(None, (), "starting", 0, False, 3), None)
    assert record["answer_frame"] is None and record["cards"] == [] and record["sets"] == [] and record["verdict"] == "uncertain"
    assert (record["width"], record["height"]) == (SMALL[1], SMALL[0]) and record["seen"] == 3


# -- the command line -------------------------------------------------------------------------------
@pytest.fixture
def scripted_cli(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Board]]:
    """`setfinder live` with the scripted recogniser in place of the model."""
    boards, _, _ = game_script()
    monkeypatch.setattr("setfinder.commands.live._load_recognizer", lambda: ScriptedRecognizer(boards))
    yield boards


def test_cli_headless_video_to_jsonl(tmp_path: Path, scripted_cli: list[Board],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    video = tmp_path / "table.avi"
    write_video(video, table_frames(90))
    out = tmp_path / "answers.jsonl"
    code = main(["live", "--video", str(video), "--headless", "--jsonl", str(out)])
    assert code == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 90 and json.loads(lines[-1])["frame"] == 89
    assert "90 frames" in capsys.readouterr().err


def test_cli_max_frames_and_stdout(tmp_path: Path, scripted_cli: list[Board],
                                   capsys: pytest.CaptureFixture[str]) -> None:
    video = tmp_path / "table.avi"
    write_video(video, table_frames(30))
    code = main(["live", "--video", str(video), "--headless", "--jsonl", "-", "--max-frames", "10"])
    out, err = capsys.readouterr()
    assert code == 0 and len(out.splitlines()) == 10 and "frame limit" in err


def test_cli_says_once_when_the_frames_are_black_and_white(tmp_path: Path, scripted_cli: list[Board],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    grey = tmp_path / "grey.avi"
    write_video(grey, [cv2.cvtColor(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
                       for frame in table_frames(5)])
    coloured = tmp_path / "coloured.avi"
    write_video(coloured, table_frames(5))
    assert main(["live", "--video", str(grey), "--headless", "--jsonl", "-"]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "black and white" in line]
    assert notes == ["setfinder: note: the frames are black and white: no card's colour can be read from them, "
                     "so every card is uncertain; use a colour camera"]
    assert main(["live", "--video", str(coloured), "--headless", "--jsonl", "-"]) == 0
    assert "black and white" not in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["--video", "missing.mp4", "--headless", "--jsonl", "-"], "video file missing.mp4 not found"),
    (["--video", "x.mp4", "--headless"], "--headless shows nothing"),
    (["--camera", "99", "--headless", "--jsonl", "-"], "camera 99 did not open"),
])
def test_cli_faults_are_one_line_and_exit_1(argv: list[str], message: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["live", *argv]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_cli_a_crashing_reading_process_is_one_line_and_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capfd: pytest.CaptureFixture[str]) -> None:
    """Nothing but the one line reaches the terminal: not from this process, nor from the
    reading processes (capfd sees what they write too)."""
    monkeypatch.setattr("setfinder.commands.live._load_recognizer", lambda: CrashingRecognizer())
    monkeypatch.setattr("vision.frames.VideoSource.open_video",
                        lambda path: ArraySource(table_frames(5), fps=100.0, loops=None))  # until the crash
    code = main(["live", "--video", "x.avi", "--realtime", "--headless", "--jsonl", str(tmp_path / "a.jsonl"),
                 "--workers", "2"])
    out, err = capfd.readouterr()
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err
    assert "setfinder: error: reading process" in err and "stopped unexpectedly (exit code 3)" in err


def test_cli_workers_must_be_at_least_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["live", "--video", "x.mp4", "--headless", "--jsonl", "-", "--workers", "0"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--workers must be at least 1, got 0" in err


def test_cli_says_how_many_processes_read_boards(tmp_path: Path, scripted_cli: list[Board],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    video = tmp_path / "table.avi"
    write_video(video, table_frames(30))
    code = main(["live", "--video", str(video), "--realtime", "--headless", "--jsonl", str(tmp_path / "a.jsonl"),
                 "--workers", "2"])
    err = capsys.readouterr().err
    assert code == 0 and "boards read by 2 processes" in err and err.count("\n") == 1


def test_cli_without_a_display_says_to_use_headless(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    assert main(["live", "--video", "x.mp4"]) == 1
    err = capsys.readouterr().err
    assert "cannot open a window" in err and "--headless" in err and err.count("\n") == 1


def test_cli_with_an_unreachable_display_says_to_use_headless(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Some OpenCV builds abort the process when the display cannot be reached: the check runs
    in a child process, and this one lives to say so."""
    monkeypatch.setenv("DISPLAY", ":97")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    assert main(["live", "--video", "x.mp4"]) == 1
    err = capsys.readouterr().err
    assert "cannot open a window" in err and "--headless" in err and err.count("\n") == 1


def test_cli_help_has_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["live", "--help"])
    assert exit_info.value.code == 0
    assert "setfinder live --video table.mp4 --headless --jsonl" in capsys.readouterr().out


def test_background_threads_are_gone_after_the_run() -> None:
    boards, _, _ = game_script()
    run_live(ArraySource(table_frames(30), fps=600.0), ScriptedRecognizer(boards), realtime=True)
    assert not any(t.name.startswith("setfinder-") for t in threading.enumerate())


def test_tracker_is_reusable_across_runs() -> None:
    """A run ends cleanly and leaves nothing half-done: a second run continues the same game."""
    boards, table, _ = game_script()
    tracker = BoardTracker()
    first = run_live(ArraySource(table_frames(30)), ScriptedRecognizer(boards[:30]), tracker=tracker)
    second = run_live(ArraySource(table_frames(20)), ScriptedRecognizer(boards[30:50]), tracker=tracker)
    assert first.last is not None and second.last is not None
    assert second.last.version == first.last.version


# -- end to end: the real recogniser on a generated game ----------------------------------------------
CLIP_SECONDS, RENDER_FPS, REPEAT = 6.0, 6.0, 5  # rendered at 6 fps, shown at 30 fps


@pytest.fixture(scope="module")
def generated_game(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`setfinder live --video clip.avi --headless --jsonl` on a generated game.

    The clip (`vision.video.generate_clip`: steady table, a hand takes a SET card by card, three
    gaps, the hand deals three) is rendered at 6 frames per second, each frame shown 5 times
    with fresh sensor noise: a 30 fps video of 180 frames, written as MJPG like a webcam's.
    """
    from vision.cardreader import DEFAULT_MODEL_PATH

    if not DEFAULT_MODEL_PATH.is_file():
        pytest.skip(f"card model not built ({DEFAULT_MODEL_PATH}); run `setfinder train`")
    from vision.video import cards_on_table, generate_clip

    folder = tmp_path_factory.mktemp("live-game")
    rng = np.random.default_rng(0)
    rendered = list(generate_clip(11, CLIP_SECONDS, RENDER_FPS, (960, 720)))
    frames, truths = [], []
    for image, truth in rendered:
        for _ in range(REPEAT):
            noise = rng.normal(0, 2.0, image.shape)
            frames.append(np.clip(image + noise, 0, 255).astype(np.uint8))
            truths.append(truth)
    video = folder / "game.avi"
    write_video(video, frames, fps=30.0)
    out = folder / "answers.jsonl"
    code = main(["live", "--video", str(video), "--headless", "--jsonl", str(out)])
    records = [json.loads(line) for line in out.read_text().splitlines()]
    return {"code": code, "records": records, "truths": truths, "video": video,
            "tables": [sorted(cards_on_table(t)) for t in truths]}


def truth_sets_of(cards: list[Card]) -> set[frozenset[Card]]:
    from core.cards import find_sets

    return {frozenset(cards[i] for i in triple) for triple in find_sets(cards)}


def record_cards(record: dict[str, Any]) -> list[Card]:
    """The whole cards of a record (cards cut by the frame edge, e.g. in a hand coming in over
    it, are outlined but take no part in SETs)."""
    return sorted(Card.from_attributes(count=c["count"], color=c["color"], shading=c["shading"],
                                       shape=c["shape"]) for c in record["cards"] if not c["partial"])


def steady_phases(truths: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """(first, last + 1) frame of each steady phase of the clip."""
    phases, start = [], None
    for index, truth in enumerate(truths + [{"phase": "end"}]):
        if truth["phase"] == "steady" and start is None:
            start = index
        elif truth["phase"] != "steady" and start is not None:
            phases.append((start, index))
            start = None
    return phases


def test_generated_game_runs_to_the_end_of_the_video(generated_game: dict[str, Any]) -> None:
    records = generated_game["records"]
    assert generated_game["code"] == 0
    assert [r["frame"] for r in records] == list(range(len(generated_game["truths"])))


def test_generated_game_sets_match_the_truth_once_steady(generated_game: dict[str, Any]) -> None:
    records, tables = generated_game["records"], generated_game["tables"]
    phases = steady_phases(generated_game["truths"])
    assert len(phases) == 3  # before, between taking and dealing, after
    for start, end in phases:
        for index in range(start + 15, end):
            assert record_cards(records[index]) == tables[index], f"frame {index}"
            assert record_sets(records[index]) == truth_sets_of(tables[index]), f"frame {index}"
            assert records[index]["status"] == "steady"


def test_generated_game_new_board_arrives_within_15_frames(generated_game: dict[str, Any]) -> None:
    """After the hand has taken the SET (and after it has dealt three), the right board is up
    within 15 frames of the hand leaving."""
    records, tables = generated_game["records"], generated_game["tables"]
    for start, end in steady_phases(generated_game["truths"])[1:]:
        arrived = next(i for i in range(start, end) if record_cards(records[i]) == tables[i])
        assert arrived - start < 15


def test_generated_game_readings_hold_still_while_the_table_does(generated_game: dict[str, Any]) -> None:
    """While nothing on the table changes (no hand in view), the steady board, once caught up
    with the table (15 frames), changes at most once in any 100 frames (any card, reading or
    flag: stricter than one card's reading)."""
    records = generated_game["records"]
    for start, end in steady_phases(generated_game["truths"]):
        changes = sum(records[i]["version"] != records[i - 1]["version"] for i in range(start + 16, end))
        assert changes <= 1 + (end - start - 15) // 100, f"frames {start + 15}..{end - 1}"


def test_generated_game_through_reading_processes_gives_the_same_answers(generated_game: dict[str, Any]) -> None:
    """The pool reads with the same recogniser: frames handed over one at a time (each read
    before the next arrives), its steady answers are exactly those of reading every frame in
    turn, to the first hand and beyond. One process: each process keeps its own keyframe
    (`StreamRecognizer`), so with two the answers would hang on which process was free first."""
    from vision.recognize import Recognizer, StreamRecognizer

    source = VideoSource.open_video(generated_game["video"])
    frames = [frame for frame in iter(source.read, None)][:45]
    source.close()
    tracker, motion = RecordingTracker(BoardTracker()), MotionMeter()
    pool = PoolReading(StreamRecognizer(Recognizer()), tracker, workers=1)  # type: ignore[arg-type]
    try:
        for count, frame in enumerate(frames, start=1):
            pool.answer(frame, motion.update(frame.image))
            wait_until(lambda: pool.reads == count, f"frame {frame.index}'s board")
    finally:
        pool.close()
    assert pool.stale == 0
    records = generated_game["records"]
    answers = [json.loads(json.dumps(frame_record(frame, steady, frame)))
               for frame, steady in zip(frames, tracker.answers)]
    assert answers == records[:len(frames)]


def test_generated_game_says_hold_still_while_the_hand_is_over_the_table(generated_game: dict[str, Any]) -> None:
    records, truths = generated_game["records"], generated_game["truths"]
    assert any(r["status"] == "hold-still" for r, t in zip(records, truths) if t["phase"] != "steady")
