"""`setfinder live`: a camera over the table, every SET shown live and steady."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from contextlib import ExitStack
from typing import IO, Any

NAME = "live"
ORDER = 20

DESCRIPTION = """\
Watch the table through a camera (or a phone used as a webcam) and show every SET
on the live picture, each in its own colour, or "No SET: deal three more". Cards
are tracked from frame to frame and their readings voted over recent frames, so
the answer does not flicker; while hands are over the table or the camera moves,
the last steady answer stays up with "hold still".

keys in the window:  n / p  one SET at a time (next / previous)
                     a      all SETs        h  hint: one card of a SET
                     q, Esc quit

A video file can stand in for the camera (--video). Without a display, use
--headless with --jsonl (one JSON object per processed frame) or --record."""

EPILOG = """\
examples:
  setfinder live
  setfinder live --camera 1 --record game.mp4
  setfinder live --video table.mp4 --headless --jsonl answers.jsonl
  setfinder live --video table.mp4 --realtime --workers 2 --headless --jsonl -

--jsonl writes one object per processed frame: {"frame", "time", "answer_frame"
(the frame the answer was read from), "status" ("starting" | "steady" |
"hold-still"), "seen", "version", "width", "height", "cards": [{"id", "count",
"color", "shading", "shape", "corners", "confidence", "partial", "uncertain"}],
"sets": [[id, id, id]], "verdict"}: the steady board in the `setfinder find
--json` schema. A video is read frame by frame unless --realtime; a camera always
runs in real time: the picture is shown at the camera's rate, boards are read in
the background from the newest frame, and frames are skipped rather than queued.
In real time, boards are read by --workers processes at once (default: one per
core); --workers 1 reads them in a thread of this process instead."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(NAME, help="show every SET live from a camera",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--camera", type=int, default=0, metavar="INDEX",
                        help="camera to open (default 0, the first)")
    source.add_argument("--video", metavar="FILE", help="read this video file instead of a camera")
    parser.add_argument("--record", metavar="OUT.mp4", help="write the annotated picture to a video file")
    parser.add_argument("--headless", action="store_true", help="no window (needs --jsonl or --record)")
    parser.add_argument("--jsonl", metavar="OUT", help="write one JSON object per processed frame ('-': stdout)")
    parser.add_argument("--realtime", action="store_true",
                        help="play a --video at its own speed, skipping frames like a camera")
    parser.add_argument("--max-frames", type=int, metavar="N", help="stop after N processed frames")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="in real time, read boards in N processes at once (default: one per core; "
                             "1: in a thread of this process)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from setfinder.errors import UserError
    from vision import live
    from vision.frames import LiveError, VideoSource
    from vision.window import Window, window_problem

    if args.headless and not (args.jsonl or args.record):
        raise UserError("--headless shows nothing: add --jsonl OUT (or '-') and/or --record OUT.mp4")
    if args.max_frames is not None and args.max_frames < 1:
        raise UserError(f"--max-frames must be at least 1, got {args.max_frames}")
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers must be at least 1, got {args.workers}")
    if not args.headless:
        problem = window_problem()
        if problem:
            raise UserError(f"cannot open a window: {problem}; run with --headless --jsonl OUT "
                            "(or --record OUT.mp4)")
    try:
        with ExitStack() as stack:
            source = (VideoSource.open_video(args.video) if args.video
                      else VideoSource.open_camera(args.camera))
            stack.callback(source.close)  # run_live closes it too; closing twice is harmless
            recognizer = _load_recognizer()
            recorder = live.VideoRecorder(args.record, source.fps) if args.record else None
            jsonl = _open_jsonl(args.jsonl, stack)
            window = None if args.headless else Window()
            summary = live.run_live(source, recognizer, window=window, recorder=recorder, jsonl=jsonl,
                                    realtime=True if args.realtime else None, max_frames=args.max_frames,
                                    workers=args.workers, on_result=_note_if_black_and_white())
    except LiveError as error:
        raise UserError(str(error)) from None
    skipped = f", {summary.skipped} skipped" if summary.skipped else ""
    readers = ""
    if summary.workers:
        readers = (f"; {summary.reads} boards read by {summary.workers} "
                   f"{'processes' if summary.workers > 1 else 'thread'}")
    print(f"setfinder live: {summary.processed} frames in {summary.seconds:.1f} s "
          f"({summary.fps:.1f} fps{skipped}){readers}; stopped: {summary.stopped_by}", file=sys.stderr)
    return 0


def _note_if_black_and_white() -> Callable[[Any], None]:
    """A live-mode callback that says once, on the first frame, when the frames hold no colour
    (a monochrome or infrared camera): every card is then uncertain, and the user should know
    why."""
    from vision.imageio import shows_no_colour

    first = True

    def note(result: Any) -> None:
        nonlocal first
        if first:
            first = False
            if shows_no_colour(result.frame.image):
                print("setfinder: note: the frames are black and white: no card's colour can be read "
                      "from them, so every card is uncertain; use a colour camera", file=sys.stderr)
    return note


def _load_recognizer() -> Any:
    from setfinder.errors import UserError
    from vision.recognize import Recognizer, StreamRecognizer

    try:
        return StreamRecognizer(Recognizer())
    except (OSError, ValueError) as error:
        raise UserError(f"cannot load the card reader model: {error}") from None


def _open_jsonl(path: str | None, stack: ExitStack) -> IO[str] | None:
    from setfinder.errors import UserError

    if path is None:
        return None
    if path == "-":
        return sys.stdout
    try:
        return stack.enter_context(open(path, "w", encoding="utf-8"))
    except OSError as error:
        raise UserError(f"cannot write {path}: {error.strerror}") from None
