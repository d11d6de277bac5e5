"""Live mode on generated 960x720 video: frames per second, frame-to-answer latency, memory.

    python bench/bench_live.py                  # about 3 minutes: speed, latency, answers, memory
    nice -n 10 python bench/bench_live.py --minutes 10   # the 10-minute flat-memory run

The clip is `vision.video.generate_clip` (a steady table, a hand takes a SET, deals three), made
at ``--render-fps`` and shown at 30 frames per second by repeating each rendered frame with
fresh sensor noise (rendering a frame takes most of a second, so a true 30 fps clip would take
minutes to make). Three runs, all drawing the overlay as the window would:

1. every frame read in turn, as fast as possible (as for a video file): processing rate, time
   per stage (wall and CPU), and whether the steady answers match the clip's ground truth;
2. a camera at 30 fps (a thread delivering frames on time, newest frame only; boards read in
   the background from the newest frame): frames shown per second, boards read per second,
   skipped frames, and latency from the arrival of the frame behind the shown answer to the
   answer being drawn;
3. the same camera for ``--minutes``: resident memory (RSS) sampled every 10 seconds.

Wall times depend on what else the machine is doing; the CPU times (one OpenCV thread) say
what the work itself costs. The load average is printed with the results.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import markdown_table  # noqa: E402

import cv2  # noqa: E402

from core.cards import Card  # noqa: E402
from vision.cardreader import CardReader  # noqa: E402
from vision.live import Frame, LiveResult, MotionMeter, SetView, VideoRecorder, annotate, run_live  # noqa: E402
from vision.recognize import Recognizer  # noqa: E402
from vision.tracking import BoardTracker  # noqa: E402
from vision.video import cards_on_table, generate_clip  # noqa: E402

CAMERA_FPS = 30.0


class ClipSource:
    """The rendered clip at 30 fps: each rendered frame ``repeat`` times, each time with one of a
    few fixed noise fields added (sensor noise changes every frame). ``total`` frames, looping."""

    def __init__(self, frames: list[np.ndarray], repeat: int, total: int, seed: int = 0) -> None:
        self.frames = frames
        self.repeat = repeat
        self.total = total
        self.fps = CAMERA_FPS
        self.name = "generated clip"
        self.is_camera = False
        rng = np.random.default_rng(seed)
        shape = frames[0].shape
        noise = [rng.normal(0, 2.5, shape) for _ in range(3)]
        self.noise_up = [np.clip(n, 0, 255).astype(np.uint8) for n in noise]
        self.noise_down = [np.clip(-n, 0, 255).astype(np.uint8) for n in noise]
        self._index = 0

    def frame_at(self, index: int) -> np.ndarray:
        base = self.frames[(index // self.repeat) % len(self.frames)]
        k = index % len(self.noise_up)
        return cv2.subtract(cv2.add(base, self.noise_up[k]), self.noise_down[k])

    def read(self) -> Frame | None:
        if self._index >= self.total:
            return None
        frame = Frame(self._index, self._index / self.fps, self.frame_at(self._index), time.perf_counter())
        self._index += 1
        return frame

    def close(self) -> None:
        pass


class DrawOnly:
    """A display that shows nothing: the overlay is still drawn, as for a window."""

    def show(self, image: Any) -> None:
        return None

    def close(self) -> None:
        pass


def rss_mb() -> float:
    """Resident memory of this process in MB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def record_sets(board: Any) -> set[frozenset[Card]]:
    return {frozenset(board.cards[i].card for i in triple) for triple in board.sets()}


def truth_sets(truth: dict[str, Any]) -> set[frozenset[Card]]:
    from core.cards import find_sets

    cards = cards_on_table(truth)
    return {frozenset(cards[i] for i in triple) for triple in find_sets(cards)}


def make_clip(args: argparse.Namespace) -> tuple[list[np.ndarray], list[dict[str, Any]], float]:
    start = time.perf_counter()
    frames, truths = [], []
    for image, truth in generate_clip(args.seed, args.seconds, args.render_fps, (args.width, args.height)):
        frames.append(image)
        truths.append(truth)
    return frames, truths, time.perf_counter() - start


def run_every_frame(recognizer: Recognizer, frames: list[np.ndarray], truths: list[dict[str, Any]],
                    repeat: int) -> dict[str, Any]:
    """Run 1: every frame, as fast as possible, with answers checked against the truth."""
    total = len(frames) * repeat
    source = ClipSource(frames, repeat, total)
    stages: dict[str, list[float]] = {}
    tracker, motion, view = BoardTracker(), MotionMeter(), SetView()
    # Time each stage on its own first, wall and CPU time (the loop below times the whole).
    cv2.setNumThreads(1)
    for index in range(0, total, max(1, total // 60)):
        image = source.frame_at(index)
        marks = [(time.perf_counter(), time.process_time())]
        board = recognizer.read_board(image)
        marks.append((time.perf_counter(), time.process_time()))
        moving = motion.update(image)
        marks.append((time.perf_counter(), time.process_time()))
        steady = tracker.update(board, scene_moving=moving)
        marks.append((time.perf_counter(), time.process_time()))
        annotate(image, steady, view, 30.0)
        marks.append((time.perf_counter(), time.process_time()))
        for k, name in enumerate(("recognise", "motion", "track", "draw")):
            stages.setdefault(f"{name} wall", []).append((marks[k + 1][0] - marks[k][0]) * 1000)
            stages.setdefault(f"{name} CPU", []).append((marks[k + 1][1] - marks[k][1]) * 1000)
    cv2.setNumThreads(2)

    results: list[tuple[int, Any, Any]] = []
    process_ms: list[float] = []
    raw_boards: list[Any] = []

    class KeepRaw:
        """The recogniser, keeping each frame's own board to compare with the steady one."""

        def read_board(self, image: np.ndarray) -> Any:
            raw_boards.append(recognizer.read_board(image))
            return raw_boards[-1]

    def keep(result: LiveResult) -> None:
        process_ms.append(result.process_ms)
        results.append((result.frame.index, result.steady.board, raw_boards[-1]))

    summary = run_live(ClipSource(frames, repeat, total), KeepRaw(), window=DrawOnly(), realtime=False,
                       on_result=keep)
    # Answers against the truth: in steady phases, from 15 frames after the phase began.
    phase_start = 0
    checked = correct = raw_correct = 0
    arrivals: list[int] = []
    for index, board, raw in results:
        truth = truths[index // repeat]
        previous = truths[max(0, index - 1) // repeat]
        if truth["phase"] != previous["phase"] or index == 0:
            phase_start = index
            waiting = truth["phase"] == "steady" and index > 0
        if truth["phase"] != "steady":
            continue
        right = is_right(board, truth)
        if waiting and right:
            arrivals.append(index - phase_start)
            waiting = False
        if index - phase_start >= 15:
            checked += 1
            correct += right
            raw_correct += is_right(raw, truth)
    return {"frames": total, "fps": summary.fps, "process_ms": process_ms, "stages": stages,
            "checked": checked, "correct": correct, "raw_correct": raw_correct, "arrivals": arrivals}


def is_right(board: Any, truth: dict[str, Any]) -> bool:
    """Every whole card read right (so the SETs are right), as the live tests check."""
    return board is not None and record_sets(board) == truth_sets(truth) \
        and sorted(s.card for s in board.cards if not s.partial) == sorted(cards_on_table(truth))


def run_camera(recognizer: Recognizer, frames: list[np.ndarray], repeat: int, seconds: float,
               sample_every: float = 10.0, record: str | None = None) -> dict[str, Any]:
    """Runs 2 and 3: a camera delivering 30 fps for ``seconds``; memory sampled as it goes;
    the annotated stream written to ``record`` when given."""
    total = int(seconds * CAMERA_FPS)
    latencies: deque[float] = deque(maxlen=5000)
    reads: deque[float] = deque(maxlen=5000)
    samples: list[tuple[float, float]] = [(0.0, rss_mb())]
    start = time.perf_counter()
    next_sample = sample_every

    def keep(result: LiveResult) -> None:
        nonlocal next_sample
        if result.answer_from is not None:
            latencies.append(result.latency_ms)
        reads.append(result.reads_per_s)
        elapsed = time.perf_counter() - start
        if elapsed >= next_sample:
            samples.append((elapsed, rss_mb()))
            next_sample += sample_every

    source = ClipSource(frames, repeat, total)
    recorder = VideoRecorder(record, CAMERA_FPS) if record else None
    summary = run_live(source, recognizer, window=DrawOnly(), recorder=recorder, realtime=True, on_result=keep)
    samples.append((time.perf_counter() - start, rss_mb()))
    return {"arrived": total, "processed": summary.processed, "skipped": summary.skipped,
            "fps": summary.fps, "reads": summary.reads, "reads_per_s": summary.reads / summary.seconds,
            "latency": list(latencies), "samples": samples}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=8.0, help="clip length (default 8)")
    parser.add_argument("--render-fps", type=float, default=6.0, help="frames rendered per clip second (default 6)")
    parser.add_argument("--width", type=int, default=960)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument("--minutes", type=float, default=1.0, help="length of the memory run (default 1)")
    parser.add_argument("--model", help="card_reader.json to use (default: models/card_reader.json)")
    parser.add_argument("--record", metavar="OUT.mp4", help="also record the camera run (memory with a writer)")
    args = parser.parse_args(argv)
    repeat = max(1, round(CAMERA_FPS / args.render_fps))

    cv2.setNumThreads(2)
    recognizer = Recognizer(CardReader.load(args.model)) if args.model else Recognizer()
    frames, truths, made_in = make_clip(args)
    print(f"clip: {len(frames)} frames rendered at {args.width}x{args.height} in {made_in:.0f} s, "
          f"each shown {repeat}x: {len(frames) * repeat} frames at 30 fps (seed {args.seed})\n")

    first = run_every_frame(recognizer, frames, truths, repeat)
    stage_rows = [[name, f"{statistics.median(ms):.1f}", f"{percentile(ms, 0.95):.1f}"]
                  for name, ms in first["stages"].items()]
    print(f"Per-frame stages (ms, {args.width}x{args.height}, one OpenCV thread):")
    print(markdown_table(["stage", "median", "p95"], stage_rows))
    print()
    pm = first["process_ms"]
    print("Every frame, as fast as possible:")
    print(markdown_table(["frames", "fps", "ms/frame median", "p95", "single frames right", "steady answers right",
                          "frames to new board"],
                         [[first["frames"], f"{first['fps']:.1f}", f"{statistics.median(pm):.1f}",
                           f"{percentile(pm, 0.95):.1f}", f"{first['raw_correct']}/{first['checked']}",
                           f"{first['correct']}/{first['checked']}",
                           ", ".join(map(str, first["arrivals"])) or "never"]]))
    print("(answers checked in the clip's steady phases from 15 frames in; right = every whole card read"
          " right and the SETs as in the truth)")
    print()

    camera = run_camera(recognizer, frames, repeat, args.minutes * 60.0, record=args.record)
    lat = camera["latency"]
    recording = f", recording to {args.record}" if args.record else ""
    print(f"Camera at 30 fps for {args.minutes:g} min (newest frame only, boards read in the background{recording}):")
    print(markdown_table(["frames arrived", "shown", "skipped", "shown fps", "boards read", "reads/s",
                          "latency median ms", "p95 ms"],
                         [[camera["arrived"], camera["processed"], camera["skipped"], f"{camera['fps']:.1f}",
                           camera["reads"], f"{camera['reads_per_s']:.1f}",
                           f"{statistics.median(lat):.1f}", f"{percentile(lat, 0.95):.1f}"]]))
    print()
    samples = camera["samples"]
    shown = samples if len(samples) <= 8 else samples[:: max(1, len(samples) // 8)] + [samples[-1]]
    print("Resident memory during the camera run:")
    print(markdown_table(["time s", "RSS MB"], [[f"{t:.0f}", f"{mb:.1f}"] for t, mb in shown]))
    settled = [mb for t, mb in samples if t >= 20.0] or [samples[-1][1]]
    print(f"\nRSS after the first 20 s: min {min(settled):.1f} MB, max {max(settled):.1f} MB, "
          f"growth {settled[-1] - settled[0]:+.1f} MB over {samples[-1][0] - 20.0:.0f} s")
    print(f"load average at the end (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
