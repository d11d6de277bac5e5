"""Speed and memory of photo mode on this machine.

Prints medians over repeated runs in one process:
- a 960x720 webcam frame end to end (detect, warp, read, find SETs), with a per-stage breakdown,
  on the labelled webcam frames in ../shared and on generated 12-card frames, one per table kind
  (and each kind's own figures);
- a 12 MP phone JPEG including decoding;
- peak memory (RSS) for one 12 MP photo, and RSS across a batch of 100 photos (must stay flat).

    python bench/bench_speed.py [--repeats 30]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import REPO, SHARED_DATA, markdown_table, median_ms

import cv2
import numpy as np

from vision.imageio import load_photo
from vision.recognize import Recognizer
from vision.scene import generate_scene
from vision.tables import TABLES


def stage_medians(recognizer: Recognizer, frames: list[np.ndarray], repeats: int) -> dict[str, float]:
    totals: list[float] = []
    stages: dict[str, list[float]] = {}
    for _ in range(repeats):
        for frame in frames:
            start = time.perf_counter()
            _, timings = recognizer.read_board_timed(frame)
            totals.append((time.perf_counter() - start) * 1000)
            for name, ms in timings.items():
                stages.setdefault(name, []).append(ms)
    result = {name: statistics.median(values) for name, values in stages.items()}
    result["total"] = statistics.median(totals)
    return result


def twelve_mp_jpeg(folder: Path) -> Path:
    """A 12 MP (4032 x 3024) JPEG: the errcw phone photo when present, else a generated one."""
    real = SHARED_DATA / "errcw-set-solver" / "boards" / "a.jpg"
    if real.is_file():
        return real
    image, _ = generate_scene(7, 12, size=(4032, 3024), table="light-wood")
    path = folder / "phone-12mp.jpg"
    cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    return path


def memory_child(path: str, count: int) -> None:
    """Run in a subprocess: RSS after each photo, printed as JSON."""
    recognizer = Recognizer()
    rss = []
    for _ in range(count):
        photo = load_photo(path)
        recognizer.read_board(photo.image, photo.scale)
        del photo
        rss.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        with open("/proc/self/statm") as statm:
            rss[-1] = int(statm.read().split()[1]) * resource.getpagesize() / 2**20
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"peak_mb": peak, "rss_mb": rss}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--memory-child", nargs=2, metavar=("PATH", "COUNT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child[0], int(args.memory_child[1]))
        return

    recognizer = Recognizer()
    rows = []
    webcam = sorted((SHARED_DATA / "set-photos" / "boards").glob("webcam-*.png"))
    if webcam:
        frames = [load_photo(p).image for p in webcam]
        stages = stage_medians(recognizer, frames, args.repeats)
        rows.append(["960x720 webcam frames (../shared, 12 cards)", *(f"{stages[k]:.1f}" for k in
                     ("detect", "warp", "read", "order+sets", "total"))])
    # One generated frame per table kind (seed: its index): the search for cards costs
    # most on white and patterned tables, so a handful of random seeds (once four white tables
    # of five) says little about the others.
    generated = {table: generate_scene(index, 12, size=(960, 720), table=table, effects=0.5)[0]
                 for index, table in enumerate(TABLES)}
    stages = stage_medians(recognizer, list(generated.values()), args.repeats)
    rows.append([f"960x720 generated frames (12 cards, one per table kind: {len(generated)})",
                 *(f"{stages[k]:.1f}" for k in ("detect", "warp", "read", "order+sets", "total"))])
    print(markdown_table(["input", "detect ms", "warp ms", "read ms", "order+sets ms", "total ms"], rows))
    print()
    per_table = {table: stage_medians(recognizer, [frame], args.repeats) for table, frame in generated.items()}
    print(markdown_table(["generated frame: table", "detect ms", "total ms"],
                         [[table, f"{stages['detect']:.1f}", f"{stages['total']:.1f}"]
                          for table, stages in per_table.items()]))
    print()

    folder = Path("/tmp/setfinder-bench")
    folder.mkdir(exist_ok=True)
    jpeg = twelve_mp_jpeg(folder)

    def decode_and_read() -> None:
        photo = load_photo(jpeg)
        recognizer.read_board(photo.image, photo.scale)

    decode_only = median_ms(lambda: load_photo(jpeg), repeats=max(5, args.repeats // 3))
    end_to_end = median_ms(decode_and_read, repeats=max(5, args.repeats // 3))
    print(markdown_table(["12 MP JPEG (" + jpeg.name + ")", "median ms"],
                         [["decode (reduced-scale JPEG decode)", f"{decode_only:.0f}"],
                          ["decode + read the board", f"{end_to_end:.0f}"]]))
    print()

    child = [sys.executable, str(Path(__file__)), "--memory-child", str(jpeg)]
    one = json.loads(subprocess.run(child + ["1"], capture_output=True, text=True, check=True, cwd=REPO).stdout)
    batch = json.loads(subprocess.run(child + ["100"], capture_output=True, text=True, check=True, cwd=REPO).stdout)
    rss = batch["rss_mb"]
    print(markdown_table(["memory", "MB"], [
        ["peak RSS, one 12 MP photo (whole process)", f"{one['peak_mb']:.0f}"],
        ["RSS after photo 10 / 50 / 100 of a batch", f"{rss[9]:.0f} / {rss[49]:.0f} / {rss[99]:.0f}"],
        ["peak RSS over the batch of 100", f"{batch['peak_mb']:.0f}"],
    ]))


if __name__ == "__main__":
    main()
