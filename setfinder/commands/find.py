"""`setfinder find`: photo mode."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

NAME = "find"
ORDER = 10

DESCRIPTION = """\
Find every card in photos of a table, read each one, and show every SET (or say
"No SET among N cards: deal three more"). Cards read with low confidence are
marked uncertain, and then no "no SET" verdict is claimed."""

EPILOG = """\
examples:
  setfinder find sample_images/table-12-sets.jpg
  setfinder find photos/*.jpg --out annotated/
  setfinder find table.jpg --json

--json prints one object per photo and line: {"image", "width", "height",
"elapsed_ms", "cards": [{"id", "count", "color", "shading", "shape", "corners",
"confidence", "partial", "uncertain"}], "sets": [[id, id, id]], "verdict"}; a photo
that cannot be read gives {"image", "error"}. Exit code 1 only when every photo failed."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(NAME, help="find and read the cards in photos, show every SET",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("photos", nargs="+", metavar="PHOTO", help="photo files (JPEG, PNG, ...)")
    parser.add_argument("--json", action="store_true", help="one JSON object per photo per line")
    parser.add_argument("--out", metavar="DIR", help="write an annotated copy of each photo here")
    parser.add_argument("--show", action="store_true", help="show the annotated photo in a window")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from setfinder.errors import UserError
    from vision.imageio import ImageError, load_photo, shows_no_colour
    from vision.recognize import Recognizer

    try:
        recognizer = Recognizer()
    except (OSError, ValueError) as error:
        raise UserError(f"cannot load the card reader: {error}") from None
    out_dir = Path(args.out) if args.out else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    show = False
    if args.show:
        from vision.window import window_problem

        problem = window_problem()
        show = problem is None
        if problem:
            print(f"setfinder: note: --show ignored: {problem} (use --out DIR to save images)",
                  file=sys.stderr)

    succeeded = 0
    for path in args.photos:
        try:
            photo = load_photo(path)
        except ImageError as error:
            _report_error(args, path, str(error))
            continue
        start = time.perf_counter()
        board = recognizer.read_board(photo.image, photo.scale)
        elapsed_ms = (time.perf_counter() - start) * 1000.0
        if not board.cards:
            _report_error(args, path, f"{path}: no cards found; {_what_to_do(photo.image)}")
            continue
        succeeded += 1
        if shows_no_colour(photo.image):
            print(f"setfinder: note: {path} is black and white: no card's colour can be read from it, "
                  "so every card is uncertain; take a colour photo", file=sys.stderr)
        annotated_path = None
        if out_dir is not None or show:
            from vision.overlay import draw_board
            annotated = draw_board(photo.image, board)
            if out_dir is not None:
                annotated_path = out_dir / f"{Path(path).stem}.annotated.jpg"
                _write_image(annotated_path, annotated)
            if show:
                _show(path, annotated)
        _report_board(args, path, board, elapsed_ms, annotated_path)
    if succeeded == 0:
        return 1
    return 0


def _report_board(args: argparse.Namespace, path: str, board: Any, elapsed_ms: float,
                  annotated_path: Path | None) -> None:
    from vision.report import board_table, board_to_json, verdict_text

    if args.json:
        record = {"image": path, **board_to_json(board), "elapsed_ms": round(elapsed_ms, 2)}
        ordered = {key: record[key] for key in
                   ("image", "width", "height", "elapsed_ms", "cards", "sets", "verdict")}
        print(json.dumps(ordered), flush=True)
        return
    print(f"{path}: {len(board.cards)} card{'' if len(board.cards) == 1 else 's'} ({elapsed_ms:.0f} ms)")
    print(board_table(board))
    print(verdict_text(board))
    for number, triple in enumerate(board.sets(), 1):
        names = ", ".join(str(board.cards[i].card) for i in triple)
        ids = " ".join(str(i + 1) for i in triple)
        print(f"  SET {number}: {ids}  ({names})")
    if annotated_path is not None:
        print(f"annotated: {annotated_path}")
    print()


def _what_to_do(image: Any) -> str:
    """What to do about a photo in which no card was found: light it where it is too dark or
    washed out to show any, else frame the cards."""
    import numpy as np

    grey = image[::4, ::4].mean(axis=2)
    if np.percentile(grey, 99) < _DARK:
        return "the photo is almost black: light the table, or let the camera expose longer"
    if np.percentile(grey, 1) > _WASHED_OUT:
        return "the photo is almost white: it is overexposed, so take it with less light or exposure"
    return "photograph the table from above with the cards in view and in focus"


# A photo whose brightest pixels (99th percentile) are darker than this shows nothing; one whose
# darkest (1st percentile) are brighter than this is washed out: no ink shows on its cards.
_DARK = 40
_WASHED_OUT = 230


def _report_error(args: argparse.Namespace, path: str, message: str) -> None:
    if args.json:
        print(json.dumps({"image": path, "error": message}), flush=True)
    print(f"setfinder: error: {message}", file=sys.stderr)


def _write_image(path: Path, image: Any) -> None:
    import cv2

    from setfinder.errors import UserError

    try:
        written = cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    except cv2.error:
        written = False
    if not written:
        raise UserError(f"cannot write {path}; check that the folder is writable")


def _show(path: str, image: Any) -> None:
    import cv2

    try:
        cv2.imshow(f"setfinder: {path}", image)
        cv2.waitKey(0)
        cv2.destroyAllWindows()
    except cv2.error:
        print("setfinder: note: cannot open a window here (headless OpenCV?); use --out DIR",
              file=sys.stderr)
