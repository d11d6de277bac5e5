"""Live mode on generated 960x720 video: frames per second, frame-to-answer latency, memory.

    python bench/bench_live.py                  # about 4 minutes: speed, latency, answers, memory
    python bench/bench_live.py --workers 1,2,3 --minutes 0.5
    python bench/bench_live.py --photos         # also the real webcam frames of ../shared as a camera
    nice -n 10 python bench/bench_live.py --minutes 10 --workers 2   # the 10-minute flat-memory run

The clip is `vision.video.generate_clip` (a steady table, a hand takes a SET, deals three), made
at ``--render-fps`` and shown at 30 frames per second by repeating each rendered frame with
fresh sensor noise (rendering a frame takes most of a second, so a true 30 fps clip would take
minutes to make: ``--render-fps 30``). Boards are read as live mode reads them, with
`vision.recognize.StreamRecognizer`: the cards are searched for only when a change in the
picture has settled (and every 8th read of a still one, after its answer), otherwise re-read
where they were found; while the picture keeps changing (a hand moving), only the cards away
from the change are re-read. So the repeats matter: at 6 rendered frames a second, the hand
moves every 5th frame and the repeats between are still frames, each change searched once;
with ``--render-fps 30`` the hand moves in every frame, which is the honest case for the hand
phases. ``--search-every-frame`` reads with the plain
`Recognizer` (a search in every frame) to compare. The runs, all drawing the overlay as the
window would:

1. every frame read in turn, as fast as possible (as for a video file): processing rate, time
   per stage (wall and CPU), and whether the steady answers match the clip's ground truth;
2. a camera at 30 fps (a thread delivering frames on time, newest frame only; boards read in
   the background from the newest frame), once per ``--workers`` entry: 1 is the reading
   thread, N > 1 that many reading processes. Frames shown per second, boards read per second
   (and boards dropped as stale: read from a frame older than one already shown), skipped
   frames, latency from the arrival of the frame behind the shown answer to the answer being
   drawn, CPU time of all processes, and, after each hand leaves the table, the time until
   the right board is shown, and each wrong board shown from 0.5 s on, with what it gets
   wrong;
3. during those runs (``--minutes`` each), resident memory (RSS) of this process and of the
   reading processes, sampled every 10 seconds.

Wall times depend on what else the machine is doing; the CPU times (one OpenCV thread) say
what the work itself costs. The load average is printed before and after each run: other
engineers' work on the same 2 cores counts in it and takes CPU from these runs. Where the
kernel shares CPU between sessions (Linux autogroup, said at the end), a busy machine gives
this benchmark its session's share whatever the number of processes: reading processes can
only beat the reading thread on cores that are idle (``--quiet`` waits for them).
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
from _common import SHARED_DATA, markdown_table  # noqa: E402

import cv2  # noqa: E402

from core.cards import Card  # noqa: E402
from vision.cardreader import CardReader  # noqa: E402
from vision.imageio import load_photo  # noqa: E402
from vision.frames import Frame, MotionMeter  # noqa: E402
from vision.live import LiveResult, SetView, VideoRecorder, annotate, run_live  # noqa: E402
from vision.reading import default_workers  # noqa: E402
from vision.recognize import Recognizer, StreamRecognizer  # noqa: E402
from vision.tracking import BoardTracker  # noqa: E402
from vision.video import cards_on_table, generate_clip  # noqa: E402

CAMERA_FPS = 30.0


class ClipSource:
    """The rendered clip at 30 fps: each rendered frame ``repeat`` times, each time with one of a
    few fixed noise fields added (sensor noise changes every frame). ``total`` frames, looping."""

    def __init__(self, frames: list[np.ndarray], repeat: int, total: int, seed: int = 0,
                 mark: set[int] | None = None) -> None:
        self.frames = frames
        self.mark = mark or set()  # rendered frames whose arrival times are kept (in arrived_at)
        self.arrived_at: dict[int, float] = {}
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
        if self._index % self.repeat == 0 and (self._index // self.repeat) % len(self.frames) in self.mark:
            self.arrived_at[self._index] = frame.captured_at
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


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory of a process (default this one) in MB (Linux /proc); 0 if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        return 0.0
    return float("nan")


def reading_processes() -> list[int]:
    """This process's children that are live mode's reading processes (spawned by
    multiprocessing; multiprocessing's resource tracker is left out)."""
    pids = []
    for task in Path("/proc/self/task").iterdir():
        for word in (task / "children").read_text().split():
            try:
                command = Path(f"/proc/{word}/cmdline").read_bytes()
            except OSError:
                continue
            if b"spawn_main" in command:
                pids.append(int(word))
    return pids


def cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended (the reading processes,
    once a run has closed them)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def load_average() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def cpu_ticks() -> tuple[int, int]:
    """(idle, all) clock ticks of the whole machine so far (Linux /proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return fields[3] + fields[4], sum(fields)  # idle + iowait, all


def cores_idle_since(ticks: tuple[int, int]) -> float:
    """How many cores, on average, sat idle since ``ticks`` (from `cpu_ticks`)."""
    idle, total = cpu_ticks()
    return (os.cpu_count() or 1) * (idle - ticks[0]) / max(1, total - ticks[1])


def idle_cores(seconds: float = 2.0) -> float:
    """How many cores sat idle over the next ``seconds``: what other work leaves for this
    benchmark, right now (the load average lags by a minute)."""
    ticks = cpu_ticks()
    time.sleep(seconds)
    return cores_idle_since(ticks)


def wait_for_quiet(cores: float, patience: float) -> float:
    """Wait (at most ``patience`` seconds) until at least ``cores`` cores are idle; the idle
    cores seen last."""
    deadline = time.monotonic() + patience
    idle = idle_cores()
    while idle < cores and time.monotonic() < deadline:
        idle = idle_cores()
    return idle


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


def stream_of(recognizer: Recognizer, search_every_frame: bool) -> Recognizer | StreamRecognizer:
    """What live mode reads a stream with: `StreamRecognizer` (cards found afresh only when the
    picture changes), or with ``--search-every-frame`` the plain recogniser."""
    return recognizer if search_every_frame else StreamRecognizer(recognizer)


def run_every_frame(recognizer: Recognizer, frames: list[np.ndarray], truths: list[dict[str, Any]],
                    repeat: int, search_every_frame: bool = False) -> dict[str, Any]:
    """Run 1: every frame, as fast as possible, with answers checked against the truth."""
    total = len(frames) * repeat
    source = ClipSource(frames, repeat, total)
    stages: dict[str, list[float]] = {}
    tracker, motion, view = BoardTracker(), MotionMeter(), SetView()
    # Time each stage on its own first, wall and CPU time (the loop below times the whole).
    cv2.setNumThreads(1)
    for index in range(0, total, max(1, total // 60)):
        image = source.frame_at(index)
        still = StreamRecognizer(recognizer)
        still.read_board(image)  # the keyframe: the next frame of a still table re-reads its cards
        marks = [(time.perf_counter(), time.process_time())]
        board = recognizer.read_board(image)
        marks.append((time.perf_counter(), time.process_time()))
        still.read_board(image)
        marks.append((time.perf_counter(), time.process_time()))
        moving = motion.update(image)
        marks.append((time.perf_counter(), time.process_time()))
        steady = tracker.update(board, scene_moving=moving)
        marks.append((time.perf_counter(), time.process_time()))
        annotate(image, steady, view, 30.0)
        marks.append((time.perf_counter(), time.process_time()))
        for k, name in enumerate(("recognise: search", "recognise: re-read (still)", "motion", "track", "draw")):
            stages.setdefault(f"{name} wall", []).append((marks[k + 1][0] - marks[k][0]) * 1000)
            stages.setdefault(f"{name} CPU", []).append((marks[k + 1][1] - marks[k][1]) * 1000)
    cv2.setNumThreads(2)

    results: list[tuple[int, Any, Any]] = []
    process_ms: list[float] = []
    raw_boards: list[Any] = []
    stream = stream_of(recognizer, search_every_frame)

    class KeepRaw:
        """The recogniser, keeping each frame's own board to compare with the steady one."""

        def read_board(self, image: np.ndarray) -> Any:
            raw_boards.append(stream.read_board(image))
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
    searches = stream.searches if isinstance(stream, StreamRecognizer) else total
    return {"frames": total, "fps": summary.fps, "process_ms": process_ms, "stages": stages, "searches": searches,
            "checked": checked, "correct": correct, "raw_correct": raw_correct, "arrivals": arrivals}


def is_right(board: Any, truth: dict[str, Any]) -> bool:
    """Every whole card read right (so the SETs are right), as the live tests check."""
    return board is not None and record_sets(board) == truth_sets(truth) \
        and sorted(s.card for s in board.cards if not s.partial) == sorted(cards_on_table(truth))


def board_difference(board: Any, truth: dict[str, Any]) -> str:
    """What a shown board gets wrong against one frame's truth: the cards lying on the table it
    does not show, and the whole cards it shows that are not there (``?``: shown uncertain)."""
    if board is None:
        return "no board"
    lying = {str(card) for card in cards_on_table(truth)}
    whole = [seen for seen in board.cards if not seen.partial]
    missing = sorted(lying - {str(seen.card) for seen in whole})
    extra = sorted(f"{seen.card}{'?' if seen.uncertain else ''}" for seen in whole if str(seen.card) not in lying)
    parts = [f"lacks {', '.join(missing)}" if missing else "", f"shows {', '.join(extra)}" if extra else ""]
    return "; ".join(part for part in parts if part) or "the SETs differ"


def after_hand_phases(truths: list[dict[str, Any]]) -> dict[int, int]:
    """For each rendered frame in a steady phase that follows a hand (the SET taken, three
    dealt): the rendered frame where that phase began."""
    begins: dict[int, int] = {}
    begun: int | None = None
    for index, truth in enumerate(truths):
        if truth["phase"] != "steady":
            begun = None
        elif index > 0 and truths[index - 1]["phase"] != "steady":
            begun = index
        if begun is not None:
            begins[index] = begun
    return begins


def run_camera(recognizer: Recognizer | StreamRecognizer, frames: list[np.ndarray], truths: list[dict[str, Any]],
               repeat: int, seconds: float, workers: int, sample_every: float = 10.0, record: str | None = None
               ) -> dict[str, Any]:
    """Runs 2 and 3: a camera delivering 30 fps for ``seconds``, boards read by ``workers``
    processes (1: the reading thread); memory sampled as it goes; the answers shown checked
    against the truth; the annotated stream written to ``record`` when given.

    After each hand (the SET taken, three dealt) the time from the arrival of the first frame
    without the hand to the first shown answer that is right; from 15 frames (0.5 s) into those
    phases, how many shown answers are right; and, once the right board is up, how often the
    steady board changes (nothing on the table does).
    """
    total = int(seconds * CAMERA_FPS)
    latencies: deque[float] = deque(maxlen=5000)
    samples: list[tuple[float, float, float]] = [(0.0, rss_mb(), 0.0)]
    begins = after_hand_phases(truths)
    period = len(frames) * repeat
    source = ClipSource(frames, repeat, total, mark=set(begins.values()))
    updates: dict[int, float] = {}  # phase start frame -> seconds to the right answer
    phases_seen: list[int] = []
    checked = correct = changes = after_right = 0
    last_version: int | None = None
    # Each wrong board shown from 0.5 s into a phase: frames shown, what it gets wrong.
    wrong_boards: dict[tuple[int, int], tuple[int, str]] = {}
    start = time.perf_counter()
    next_sample = sample_every

    def keep(result: LiveResult) -> None:
        nonlocal next_sample, checked, correct, changes, after_right, last_version
        if result.answer_from is not None:
            latencies.append(result.latency_ms)
        index = result.frame.index
        rendered = (index // repeat) % len(frames)
        if rendered in begins:
            phase_start = (index // period) * period + begins[rendered] * repeat
            if not phases_seen or phases_seen[-1] != phase_start:
                phases_seen.append(phase_start)
                last_version = None
            right = is_right(result.steady.board, truths[rendered])
            if right and phase_start not in updates and phase_start in source.arrived_at:
                updates[phase_start] = time.perf_counter() - source.arrived_at[phase_start]
            if index - phase_start >= 15:
                checked += 1
                correct += right
                if not right:
                    board_shown = (phase_start, result.steady.version)
                    frames_shown = wrong_boards.get(board_shown, (0, ""))[0] + 1
                    wrong_boards[board_shown] = (frames_shown, board_difference(result.steady.board, truths[rendered]))
            if phase_start in updates:  # the right board is up: count what changes after it
                after_right += 1
                changes += last_version is not None and result.steady.version != last_version
                last_version = result.steady.version
        elapsed = time.perf_counter() - start
        if elapsed >= next_sample:
            samples.append((elapsed, rss_mb(), sum(rss_mb(pid) for pid in reading_processes())))
            next_sample += sample_every

    recorder = VideoRecorder(record, CAMERA_FPS) if record else None
    load_before = load_average()
    cpu_before, ticks = cpu_seconds(), cpu_ticks()
    summary = run_live(source, recognizer, window=DrawOnly(), recorder=recorder, realtime=True, on_result=keep,
                       workers=workers)
    cpu, idle = cpu_seconds() - cpu_before, cores_idle_since(ticks)
    samples.append((time.perf_counter() - start, rss_mb(), 0.0))
    finished = phases_seen[:-1]  # the last phase may have been cut short by the end of the run
    return {"workers": workers, "arrived": total, "processed": summary.processed, "skipped": summary.skipped,
            "fps": summary.fps, "reads": summary.reads, "reads_per_s": summary.reads / summary.seconds,
            "stale": summary.stale, "cpu_percent": 100.0 * cpu / summary.seconds, "idle": idle,
            "latency": list(latencies), "samples": samples, "load_before": load_before,
            "load_after": load_average(), "updates": [updates.get(p) for p in finished],
            "checked": checked, "correct": correct, "changes": changes, "after_right": after_right,
            "wrong_boards": wrong_boards}


def print_camera_runs(runs: list[dict[str, Any]], minutes: float, recording: str, hands: bool = True) -> None:
    print(f"Camera at 30 fps, {minutes:g} min per run (newest frame only, boards read in the background{recording}):")
    rows = []
    for run in runs:
        lat = run["latency"] or [float("nan")]
        memory = [main + workers for _, main, workers in run["samples"]]
        rows.append([f"{run['workers']} {'processes' if run['workers'] > 1 else 'thread'}",
                     run["arrived"], run["processed"], run["skipped"], f"{run['fps']:.1f}", run["reads"],
                     f"{run['reads_per_s']:.1f}", run["stale"], f"{statistics.median(lat):.0f}",
                     f"{percentile(lat, 0.95):.0f}", f"{run['cpu_percent']:.0f}%", f"{run['idle']:.1f}",
                     f"{max(memory):.0f}", f"{run['load_before']} -> {run['load_after']}"])
    print(markdown_table(["reading", "frames arrived", "shown", "skipped", "shown fps", "boards read", "reads/s",
                          "stale", "latency median ms", "p95 ms", "CPU (of one core)", "cores left idle",
                          "peak MB (all processes)", "load average before -> after"], rows))
    print("(CPU: this benchmark's processes together; cores left idle: the whole machine's, on average over"
          " the run; what neither used went to other work)")
    print()
    if not hands:
        return
    print("After each hand left the table (the SET taken, three dealt): time to the right board shown, and the"
          " shown answers from 0.5 s into those phases:")
    rows = []
    for run in runs:
        times = [t for t in run["updates"] if t is not None]
        missed = sum(t is None for t in run["updates"])
        within = sum(t <= 0.5 for t in times)
        rows.append([f"{run['workers']}", len(run["updates"]),
                     f"{1000 * statistics.median(times):.0f}" if times else "-",
                     f"{1000 * max(times):.0f}" if times else "-", f"{within}/{len(run['updates'])}", missed,
                     f"{run['correct']}/{run['checked']}",
                     f"{run['changes']} in {run['after_right']}"])
    print(markdown_table(["workers", "hands", "time to update median ms", "max ms", "within 0.5 s",
                          "never (phase ended first)", "shown answers right from 0.5 s",
                          "board changes once right (in frames)"], rows))
    print()
    wrong = [(run["workers"], phase, frames, difference) for run in runs
             for (phase, _), (frames, difference) in sorted(run["wrong_boards"].items())]
    if wrong:
        print("The wrong answers shown from 0.5 s into those phases, board by board (? uncertain):")
        print(markdown_table(["workers", "phase from frame", "frames shown", "what it gets wrong"],
                             [list(row) for row in wrong]))
        print()


def camera_on_photos(recognizer: Recognizer, args: argparse.Namespace) -> None:
    """Camera runs over the real 960x720 webcam frames of ../shared, a still table each (no hand,
    so no answers to check: reading speed and latency only)."""
    paths = sorted((SHARED_DATA / "set-photos" / "boards").glob("webcam-*.png"))
    if not paths:
        print("\n(no real webcam frames: ../shared/data is absent)")
        return
    frames = [load_photo(path).image for path in paths]
    still = [{"phase": "steady"} for _ in frames]
    # Every frame in turn first: what the reading can keep up with on a still real table.
    hold = int(2 * CAMERA_FPS)
    stream = stream_of(recognizer, args.search_every_frame)
    cv2.setNumThreads(1)
    summary = run_live(ClipSource(frames, hold, 2 * hold * len(frames)), stream, window=DrawOnly(), realtime=False)
    cv2.setNumThreads(2)
    searched = stream.searches if isinstance(stream, StreamRecognizer) else summary.processed
    print(f"\nEvery frame in turn over the {len(frames)} real webcam frames (each held 2 s with sensor noise, twice"
          f" round; drawn as for a window; one thread, one OpenCV thread): {summary.processed} frames at"
          f" {summary.fps:.1f} fps, cards searched for in {searched} of them")
    runs = []
    for workers in args.workers:
        idle = wait_for_quiet(args.quiet, args.patience) if args.quiet else idle_cores()
        print(f"\n(camera run over {len(frames)} real webcam frames with {workers} "
              f"{'processes' if workers > 1 else 'thread'}: load average {load_average()}, {idle:.1f} of "
              f"{os.cpu_count()} cores idle just before)", flush=True)
        runs.append(run_camera(stream_of(recognizer, args.search_every_frame), frames, still, hold,
                               args.minutes * 60.0, workers))
    print()
    print_camera_runs(runs, args.minutes, ", real webcam frames", hands=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=8.0, help="clip length (default 8)")
    parser.add_argument("--render-fps", type=float, default=6.0, help="frames rendered per clip second (default 6)")
    parser.add_argument("--width", type=int, default=960)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument("--minutes", type=float, default=1.0, help="length of the memory run (default 1)")
    parser.add_argument("--model", help="card_reader.json to use (default: models/card_reader.json)")
    parser.add_argument("--record", metavar="OUT.mp4", help="also record the last camera run (memory with a writer)")
    parser.add_argument("--workers", default=None, metavar="N,M",
                        help=f"camera runs to make, by reading processes (1: the reading thread; default 1,"
                             f"{default_workers()}: the thread against one process per core)")
    parser.add_argument("--quiet", type=float, default=0.0, metavar="CORES",
                        help="before each camera run, wait until this many cores are idle (shared machines)")
    parser.add_argument("--patience", type=float, default=300.0, metavar="S",
                        help="... but no longer than this (default 300 s)")
    parser.add_argument("--photos", action="store_true",
                        help="also camera runs over the labelled real webcam frames in ../shared (each held"
                             " 2 s, looping, with sensor noise): boards read per second on real frames")
    parser.add_argument("--search-every-frame", action="store_true",
                        help="find the cards afresh in every frame (as before `StreamRecognizer`), to compare")
    args = parser.parse_args(argv)
    args.workers = [int(w) for w in (args.workers or f"1,{default_workers()}").split(",")]
    if default_workers() == 1 and args.workers == [1, 1]:
        args.workers = [1]
    repeat = max(1, round(CAMERA_FPS / args.render_fps))

    cv2.setNumThreads(2)
    recognizer = Recognizer(CardReader.load(args.model)) if args.model else Recognizer()
    frames, truths, made_in = make_clip(args)
    print(f"clip: {len(frames)} frames rendered at {args.width}x{args.height} in {made_in:.0f} s, "
          f"each shown {repeat}x: {len(frames) * repeat} frames at 30 fps (seed {args.seed})\n")

    first = run_every_frame(recognizer, frames, truths, repeat, args.search_every_frame)
    stage_rows = [[name, f"{statistics.median(ms):.1f}", f"{percentile(ms, 0.95):.1f}"]
                  for name, ms in first["stages"].items()]
    print(f"Per-frame stages (ms, {args.width}x{args.height}, one OpenCV thread):")
    print(markdown_table(["stage", "median", "p95"], stage_rows))
    print()
    pm = first["process_ms"]
    print("Every frame, as fast as possible:")
    print(markdown_table(["frames", "cards searched for in", "fps", "ms/frame median", "p95", "single frames right",
                          "steady answers right", "frames to new board"],
                         [[first["frames"], f"{first['searches']} frames", f"{first['fps']:.1f}",
                           f"{statistics.median(pm):.1f}",
                           f"{percentile(pm, 0.95):.1f}", f"{first['raw_correct']}/{first['checked']}",
                           f"{first['correct']}/{first['checked']}",
                           ", ".join(map(str, first["arrivals"])) or "never"]]))
    print("(answers checked in the clip's steady phases from 15 frames in; right = every whole card read"
          " right and the SETs as in the truth)")
    print()

    runs = []
    for workers in args.workers:
        idle = wait_for_quiet(args.quiet, args.patience) if args.quiet else idle_cores()
        print(f"(camera run with {workers} {'processes' if workers > 1 else 'thread'}: load average "
              f"{load_average()}, {idle:.1f} of {os.cpu_count()} cores idle just before)", flush=True)
        runs.append(run_camera(stream_of(recognizer, args.search_every_frame), frames, truths, repeat,
                               args.minutes * 60.0, workers,
                               record=args.record if workers == args.workers[-1] else None))
    print()
    print_camera_runs(runs, args.minutes, f", recording to {args.record}" if args.record else "")
    camera = runs[-1]
    samples = camera["samples"]
    shown = samples if len(samples) <= 8 else samples[:: max(1, len(samples) // 8)] + [samples[-1]]
    print(f"Resident memory during the last camera run ({camera['workers']} workers):")
    print(markdown_table(["time s", "this process MB", "reading processes MB"],
                         [[f"{t:.0f}", f"{main:.1f}", f"{workers:.1f}"] for t, main, workers in shown]))
    settled = [(t, main, workers) for t, main, workers in samples[:-1] if t >= 20.0]
    if len(settled) >= 2:  # the last sample is taken after the run, with the processes gone
        mains, pools = [m for _, m, _ in settled], [w for _, _, w in settled]
        print(f"\nAfter the first 20 s: this process {min(mains):.1f}-{max(mains):.1f} MB "
              f"({mains[-1] - mains[0]:+.1f} MB), reading processes {min(pools):.1f}-{max(pools):.1f} MB "
              f"({pools[-1] - pools[0]:+.1f} MB), over {settled[-1][0] - settled[0][0]:.0f} s")
    if args.photos:
        camera_on_photos(recognizer, args)
    print(f"load average at the end (1, 5, 15 min): {load_average()} on {os.cpu_count()} cores "
          "(the machine is shared: other work counts in it)")
    autogroup = Path("/proc/sys/kernel/sched_autogroup_enabled")
    if autogroup.is_file() and autogroup.read_text().strip() == "1":
        print("the kernel shares CPU between sessions (autogroup): while other sessions are busy, all of "
              "this benchmark's processes together get one session's share")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
