"""`setfinder referee`: settle "that's not a SET!" and "there's no SET here!", keep the score.

The table comes from photos (stepped through with `next`), a video or a camera (the steady
boards of live mode's tracker), or a file of boards; the rules are all in `core.referee` and
`core.game`. Commands are typed one per line on stdin, so tests drive a session with a list of
lines (`Session.execute`) or a subprocess.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

from core.board import Board
from core.referee import (Referee, RefereeError, Ruling, Summary, board_from_json, read_log, replay,
                          write_event)
from setfinder.errors import UserError

NAME = "referee"
ORDER = 30

DESCRIPTION = """\
Referee a real game of SET. Cards carry position numbers (1-based, reading order,
kept while the table does not change). Claims are judged at once ("SET! Ana +1",
or which features break the rule and "Ana -1"); "no SET" calls are confirmed only
when every card was read with confidence. Between views the referee checks that
the cards taken were the claimed SET, that the dealer dealt the right number, and
that no card is read twice or comes back. One player means solitaire."""

HELP_TEXT = """\
commands (one per line):
  claim Ana 3 7 9     Ana calls SET on cards 3, 7 and 9 (or just: Ana 3 7 9)
  noset [Ana] [hint]  there is no SET here (hint: if there is one, name one card of it)
  hint                name one card that is in a SET
  next                read the next photo / the next steady view of the video or camera
  table               the cards on the table with their numbers
  undo                take back the last claim or "no SET" call (before the table changes)
  score               scores so far, per round
  end                 end the game and print the summary (also at the end of input)
  help                this list"""

EPILOG = HELP_TEXT + """

Example: setfinder referee --players Ana,Ben --photos game/ --log game.jsonl --out annotated/
         setfinder referee --players Ana,Ben --camera 0
         setfinder referee --replay game.jsonl

--log writes one JSON object per event and line (time, event, round, board, claim,
verdict, reason, scores, ...); --replay rebuilds the scores from such a log and
exits 1 if they differ from the scores it records."""

PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")
MAX_FRAMES_PER_VIEW = 900  # `next` on a camera gives up after this many frames (~30 s at 30 fps)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(NAME, help="referee a real game: judge claims and 'no SET' calls, keep score",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", metavar="NAMES", help="comma-separated names in seating order, "
                        "first dealer first (one name: solitaire)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--photos", metavar="DIR", help="photos of the table, taken in name order")
    source.add_argument("--video", metavar="FILE", help="a video of the table")
    source.add_argument("--camera", metavar="N", type=int, help="camera number (0 = the first)")
    source.add_argument("--boards", metavar="FILE",
                        help="boards already read, one `setfinder find --json` object per line")
    source.add_argument("--replay", metavar="LOG", help="rebuild the scores from a referee log and print them")
    parser.add_argument("--match", action="store_true", help="match play: every player deals one round")
    parser.add_argument("--easy", action="store_true", help="the 27 solid cards, 9 on the table")
    parser.add_argument("--solitaire-rule", choices=("penalty", "lose"), default="penalty",
                        help="solitaire 'no SET': -1 and three more (default) or the game is lost")
    parser.add_argument("--log", metavar="FILE", help="write the event log here (JSON Lines)")
    parser.add_argument("--out", metavar="DIR", help="write each view annotated with numbers and verdicts here")
    parser.add_argument("--json", action="store_true", help="print the log events as JSON lines instead of text")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.replay:
        return _replay(Path(args.replay), args.json, sys.stdout)
    if not args.players:
        raise UserError("name the players: --players Ana,Ben (one name for solitaire)")
    players = [name.strip() for name in args.players.split(",") if name.strip()]
    log_file = _open_log(args.log) if args.log else None
    try:
        sink = (lambda event: write_event(log_file, event)) if log_file is not None else None
        try:
            referee = Referee(players, match=args.match, easy=args.easy,
                              solitaire_reading=args.solitaire_rule, sink=sink)
        except ValueError as error:
            raise UserError(f"bad --players: {error}") from None
        source = _open_source(args)
        try:
            session = Session(referee, source, sys.stdout, out_dir=Path(args.out) if args.out else None,
                              json_mode=args.json)
            session.run(sys.stdin)
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()  # a camera's capture thread, a video file
    finally:
        if log_file is not None:
            log_file.close()
    return 0


# -- where the table comes from ------------------------------------------------------------------
@dataclass(frozen=True)
class View:
    """One look at the table: its board, and the image it was read from (None for board files)."""

    name: str
    board: Board
    image: Any = None  # BGR uint8 (H, W, 3) numpy array, or None


class TableSource(Protocol):
    """Something that gives successive views of the table; `next_view` is None when none is left."""

    def next_view(self) -> View | None: ...


class PhotoSource:
    """Photos in a folder, in name order, each read with the shared `Recognizer`."""

    def __init__(self, folder: Path, recognizer: Any) -> None:
        if not folder.is_dir():
            raise UserError(f"--photos {folder}: not a folder; give the folder holding the photos")
        self.paths = sorted(p for p in folder.iterdir() if p.suffix.lower() in PHOTO_SUFFIXES)
        if not self.paths:
            raise UserError(f"--photos {folder}: no photos ({', '.join(PHOTO_SUFFIXES)}) in this folder")
        self.recognizer = recognizer
        self._next = 0

    def next_view(self) -> View | None:
        from vision.imageio import ImageError, load_photo, shows_no_colour

        while self._next < len(self.paths):
            path = self.paths[self._next]
            self._next += 1
            try:
                photo = load_photo(path)
            except ImageError as error:
                print(f"skipped {path.name}: {error}", file=sys.stderr)
                continue
            if shows_no_colour(photo.image):
                print(f"{path.name} is black and white: no card's colour can be read from it, so no call "
                      "is judged on it; take colour photos", file=sys.stderr)
            return View(path.name, self.recognizer.read_board(photo.image, photo.scale), photo.image)
        return None


class SteadyViews:
    """Views from a video or camera: live mode's frame sources, motion meter and tracker, so a
    view is the next *steady* board (cards settled, no hand moving) that differs from the last.

    ``frames`` is a `vision.frames.FrameSource`; ``max_frames`` bounds one `next_view` (a camera
    pointed at an unchanging table would otherwise wait for ever).
    """

    def __init__(self, frames: Any, recognizer: Any, *, max_frames: int | None = None) -> None:
        from vision.frames import MotionMeter
        from vision.tracking import BoardTracker

        self.frames, self.recognizer, self.max_frames = frames, recognizer, max_frames
        self.tracker = BoardTracker()
        self.motion = MotionMeter()

    def close(self) -> None:
        self.frames.close()

    def next_view(self) -> View | None:
        from vision.frames import LiveError

        read = 0
        while self.max_frames is None or read < self.max_frames:
            try:
                frame = self.frames.read()
            except LiveError as error:
                raise UserError(str(error)) from None
            if frame is None:
                return None
            read += 1
            board = self.recognizer.read_board(frame.image)
            steady = self.tracker.update(board, scene_moving=self.motion.update(frame.image))
            if steady.changed and steady.board is not None:
                return View(f"{self.frames.name} frame {frame.index}", steady.board, frame.image)
        return None


class BoardFileSource:
    """Boards already read, one JSON object per line (`setfinder find --json` output)."""

    def __init__(self, path: Path) -> None:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise UserError(f"--boards {path}: {error.strerror}") from None
        self.path = path
        self._items = iter([(n, line) for n, line in enumerate(lines, 1) if line.strip()])

    def next_view(self) -> View | None:
        for number, line in self._items:
            try:
                return View(f"{self.path.name} line {number}", board_from_json(json.loads(line)))
            except (ValueError, KeyError, TypeError) as error:
                raise UserError(f"--boards {self.path} line {number}: not a board ({error})") from None
        return None


def _open_source(args: argparse.Namespace) -> TableSource:
    if args.boards:
        return BoardFileSource(Path(args.boards))
    if args.photos is None and args.video is None and args.camera is None:
        raise UserError("say where the table comes from: --photos DIR, --video FILE, --camera N or --boards FILE")
    if args.photos is not None:
        photos = PhotoSource(Path(args.photos), None)  # checks the folder before loading models
        photos.recognizer = _recognizer()
        return photos
    from vision.frames import LatestFrameReader, LiveError, VideoSource

    try:
        if args.video is not None:
            return SteadyViews(VideoSource.open_video(args.video), _stream_recognizer())
        # A camera is read in its own thread keeping only the newest frame, as in live mode.
        camera = LatestFrameReader(VideoSource.open_camera(args.camera))
    except LiveError as error:
        raise UserError(str(error)) from None
    return SteadyViews(camera, _stream_recognizer(), max_frames=MAX_FRAMES_PER_VIEW)


def _recognizer() -> Any:
    from vision.recognize import Recognizer

    try:
        return Recognizer()
    except (OSError, ValueError) as error:
        raise UserError(f"cannot load the card reader model ({error}); rebuild it with `setfinder train`") from None


def _stream_recognizer() -> Any:
    """For the frames of a video or camera: cards found afresh only when the picture changes."""
    from vision.recognize import StreamRecognizer

    return StreamRecognizer(_recognizer())


# -- the session ----------------------------------------------------------------------------------
class Session:
    """A referee session: typed commands in, answers out, annotated views written on the way.

    ``execute(line)`` runs one command and returns False once the game has been ended.
    Bad commands print ``error: ...`` and change nothing.
    """

    def __init__(self, referee: Referee, source: TableSource, out: TextIO, *,
                 out_dir: Path | None = None, json_mode: bool = False) -> None:
        self.referee = referee
        self.source = source
        self.out = out
        self.out_dir = out_dir
        self.json_mode = json_mode
        self.view: View | None = None
        self._written = 0
        self._printed_events = 0  # with --json, stdout carries the whole log, start event included
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)

    def run(self, lines: Iterable[str]) -> None:
        """Show the first view, then run commands until ``end`` or the end of input."""
        self.next_view()
        for line in lines:
            if not self.execute(line):
                return
        self.execute("end")

    def execute(self, line: str) -> bool:
        words = line.split("#", 1)[0].split()
        if not words:
            return True
        command, rest = words[0].lower(), words[1:]
        try:
            if command in ("help", "?"):
                self._say(HELP_TEXT)
            elif command == "next":
                self.next_view()
            elif command == "table":
                self._say(self.referee.table_text())
            elif command in ("score", "scores"):
                self._say(self.referee.status())
                self._say(self.referee.summary().text())
            elif command == "undo":
                self._ruling(self.referee.undo())
            elif command == "hint":
                ruling = self.referee.hint()
                self._ruling(ruling)
            elif command in ("noset", "no-set"):
                self._no_set(rest)
            elif command in ("end", "quit", "exit"):
                self._summary(self.referee.end())
                return False
            elif command == "claim":
                self._claim(rest)
            elif rest and (all(w.isdigit() for w in rest)  # "Ana 3 7 9": a claim by Ana
                           or any(command == p.lower() for p in self.referee.players)):
                self._claim(words)
            else:
                raise RefereeError(f"unknown command {words[0]!r}; type 'help' for the list")
        except RefereeError as error:
            self._say(f"error: {error}")
        return True

    def next_view(self) -> None:
        view = self.source.next_view()
        if view is None:
            self._say("No more views of the table." if self.view is not None
                      else "No view of the table could be read.")
            return
        self.view = view
        observation = self.referee.observe(view.board)
        self._say(f"[{view.name}] {observation.message}")
        if observation.accepted:
            self._draw(view, self.referee.board, observation.message)
        else:
            self._draw(view, view.board, observation.message)

    def _claim(self, words: list[str]) -> None:
        if len(words) < 2:
            raise RefereeError("say who and which cards: claim Ana 3 7 9")
        try:
            positions = [int(w) for w in words[1:]]
        except ValueError:
            raise RefereeError(f"positions are numbers: claim {words[0]} 3 7 9 (got {' '.join(words[1:])})") from None
        ruling = self.referee.claim(words[0], positions)
        self._ruling(ruling, highlight=tuple(p - 1 for p in positions))

    def _no_set(self, words: list[str]) -> None:
        hint = any(w.lower() == "hint" for w in words)
        names = [w for w in words if w.lower() != "hint"]
        if len(names) > 1:
            raise RefereeError("usage: noset [PLAYER] [hint]")
        self._ruling(self.referee.call_no_set(names[0] if names else None, hint=hint))

    def _ruling(self, ruling: Ruling, highlight: tuple[int, ...] = ()) -> None:
        self._say(ruling.message)
        if self.view is not None:
            hint = ruling.hint - 1 if ruling.hint is not None else None
            self._draw(self.view, self.referee.board, ruling.message, sets=[highlight], hint=hint)

    def _summary(self, summary: Summary) -> None:
        self._say(summary.text())

    def _say(self, text: str) -> None:
        """Print an answer; with --json, print the log events it produced instead (or, when it
        produced none, ``{"event": "message", "message": ...}``)."""
        if not self.json_mode:
            print(text, file=self.out, flush=True)
            return
        events = self.referee.events[self._printed_events:]
        self._printed_events += len(events)
        for event in events or [{"event": "message", "message": text}]:
            print(json.dumps(event, ensure_ascii=False), file=self.out, flush=True)

    def _draw(self, view: View, board: Board, banner: str, *, sets: Sequence[tuple[int, ...]] = (),
              hint: int | None = None) -> None:
        if self.out_dir is None or view.image is None:
            return
        import cv2

        from vision.overlay import draw_board

        # Never reveal SETs the players have not called: only a claimed triple is drawn.
        triples = [(t[0], t[1], t[2]) for t in sets if len(t) == 3]
        image = draw_board(view.image, board, sets=triples, banner=banner, status=self.referee.status(),
                           hint=hint)
        self._written += 1
        path = self.out_dir / f"{self._written:03d}.jpg"
        if not cv2.imwrite(str(path), image):
            raise UserError(f"cannot write {path}; check --out")


def run_commands(referee: Referee, source: TableSource, lines: Iterable[str], out: TextIO, *,
                 out_dir: Path | None = None) -> Session:
    """Run a whole session from a list of command lines (for tests and scripts)."""
    session = Session(referee, source, out, out_dir=out_dir)
    session.run(lines)
    return session


# -- logs -----------------------------------------------------------------------------------------
def _open_log(path: str) -> TextIO:
    try:
        return open(path, "w", encoding="utf-8")
    except OSError as error:
        raise UserError(f"cannot write the log {path}: {error.strerror}") from None


def _replay(path: Path, json_mode: bool, out: TextIO) -> int:
    try:
        events = read_log(path.read_text(encoding="utf-8").splitlines())
    except OSError as error:
        raise UserError(f"--replay {path}: {error.strerror}") from None
    except ValueError as error:
        raise UserError(f"--replay {path}: {error}") from None
    try:
        referee = replay(events)
    except (ValueError, KeyError) as error:
        raise UserError(f"--replay {path}: cannot replay this log ({error})") from None
    logged = events[-1].get("scores") if events else None
    summary = referee.summary()
    same = logged == referee.scores
    if json_mode:
        print(json.dumps({"summary": summary.to_json(), "logged_scores": logged, "matches_log": same}), file=out)
    else:
        print(summary.text(), file=out)
        print("Replayed scores match the log." if same
              else f"Replayed scores {referee.scores} differ from the log's {logged}.", file=out)
    return 0 if same else 1

