"""`setfinder synth`: generated table photos (and clips) with exact ground truth."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

NAME = "synth"
ORDER = 80

DESCRIPTION = """\
Generate table photos of SET cards with exact ground truth: for each card its
label, its four corners in image pixels and how much of it is visible. Every
scene is reproducible from its seed. Scenes vary the table (wood, white, grey,
black, felt, cloth, rug), the layout, camera tilt, light, blur, noise, JPEG and
props (a hand, a card box, a phone, a pen, a cable).

Each scene is written as NAME.jpg with NAME.json beside it. With --video, a
clip is written instead: the table is steady, a hand takes three cards and deals
three new ones; NAME.mp4 (or .avi) with NAME.jsonl, one truth object per frame."""

EPILOG = """\
examples:
  setfinder synth --seed 7 --cards 12 --out scenes/
  setfinder synth --seed 1 --cards 12 --deal no-set --table light-wood --out scenes/
  setfinder synth --seed 0 --cards 15 --count 200 --out bench-scenes/
  setfinder synth --seed 3 --cards 12 --video 8 --fps 15 --out clips/

truth JSON: {"seed", "width", "height", "table", "layout", "tilt", "props",
"cards": [{"card", "count", "color", "shading", "shape", "corners": [[x, y] x4,
clockwise from the card's top-left in portrait], "visibility": "full" | "partial"
| "occluded", "visible_fraction", "partial"}], "sets": [[card, card, card]]}"""


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 960x720, got {text!r}") from None
    return w, h


def register(subparsers: Any) -> None:
    from vision.scene import DEALS, LAYOUTS
    from vision.tables import TABLES

    parser = subparsers.add_parser(NAME, help="generate table photos or clips with exact ground truth",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0, help="seed of the first scene (default 0)")
    parser.add_argument("--cards", type=int, default=12, metavar="N", help="cards on the table (default 12)")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder to write into (created)")
    parser.add_argument("--size", type=_size, default=(960, 720), metavar="WxH",
                        help="image size in pixels (default 960x720)")
    parser.add_argument("--count", type=int, default=1, metavar="K",
                        help="number of scenes, seeds SEED..SEED+K-1 (default 1)")
    parser.add_argument("--video", type=float, metavar="SECONDS", help="write a clip of this length instead")
    parser.add_argument("--fps", type=float, default=15.0, help="frames per second of a clip (default 15)")
    parser.add_argument("--table", choices=sorted(TABLES), help="table surface (default: random)")
    parser.add_argument("--layout", choices=LAYOUTS, help="card layout (default: random)")
    parser.add_argument("--deal", choices=DEALS, default="any",
                        help="'sets': at least one SET; 'no-set': none (default: any)")
    parser.add_argument("--tilt", type=float, metavar="DEGREES", help="camera tilt, 0 = from above (default: random)")
    parser.add_argument("--partial", action=argparse.BooleanOptionalAction, default=None,
                        help="cut cards with the frame edge (default: random)")
    parser.add_argument("--overlap", action=argparse.BooleanOptionalAction, default=None,
                        help="slide one card partly over another (default: random)")
    parser.add_argument("--effects", type=float, default=1.0, metavar="0..1",
                        help="strength of light, blur, noise, JPEG and props; 0 = a clean drawing (default 1)")
    parser.add_argument("--name", metavar="STEM", help="file name stem (default scene-SEED / clip-SEED)")
    parser.add_argument("--quality", type=int, default=92, help="JPEG quality of saved photos (default 92)")
    parser.add_argument("--json", action="store_true", help="print one summary line of JSON per file written")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from setfinder.errors import UserError
    from setfinder.progress import progress

    _check(args, UserError)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UserError(f"cannot create {out}: {error.strerror}; choose another --out folder") from None
    if args.video is not None:
        return _run_video(args, out, UserError)

    import cv2

    from vision.scene import generate_scene

    for seed in progress(range(args.seed, args.seed + args.count), total=args.count, label="scenes"):
        try:
            image, truth = generate_scene(seed, args.cards, args.size, args.table, args.layout,
                                          deal=args.deal, tilt=args.tilt, partial=args.partial,
                                          overlap=args.overlap, effects=args.effects)
        except ValueError as error:
            raise UserError(f"{error}; change --cards or --deal") from None
        stem = args.name if args.name and args.count == 1 else (
            f"{args.name}-{seed}" if args.name else f"scene-{seed}")
        image_path = out / f"{stem}.jpg"
        if not cv2.imwrite(str(image_path), image, [cv2.IMWRITE_JPEG_QUALITY, args.quality]):
            raise UserError(f"cannot write {image_path}; check the --out folder")
        (out / f"{stem}.json").write_text(json.dumps(truth, indent=1) + "\n")
        _say(args, image_path, truth)
    return 0


def _run_video(args: argparse.Namespace, out: Path, user_error: type[Exception]) -> int:
    from vision.video import write_clip

    stem = args.name or f"clip-{args.seed}"
    try:
        video_path, truth_path, frames = write_clip(out / stem, args.seed, args.video, args.fps, args.size,
                                                    n_cards=args.cards, table=args.table, effects=args.effects)
    except ValueError as error:
        raise user_error(f"{error}; change --cards, --video or --fps") from None
    except OSError as error:
        raise user_error(f"cannot write the clip: {error}") from None
    summary = {"video": str(video_path), "truth": str(truth_path), "frames": frames,
               "fps": args.fps, "width": args.size[0], "height": args.size[1]}
    print(json.dumps(summary) if args.json else f"wrote {video_path} ({frames} frames) and {truth_path}")
    return 0


def _check(args: argparse.Namespace, user_error: type[Exception]) -> None:
    w, h = args.size
    if not (64 <= w <= 8000 and 64 <= h <= 8000):
        raise user_error(f"--size must be 64..8000 pixels each way, got {w}x{h}")
    if not 0 <= args.cards <= 81:
        raise user_error(f"--cards must be 0..81, got {args.cards}")
    if args.count < 1:
        raise user_error(f"--count must be at least 1, got {args.count}")
    if not 0.0 <= args.effects <= 1.0:
        raise user_error(f"--effects must be between 0 and 1, got {args.effects}")
    if args.video is not None and not (0 < args.video <= 120 and 1 <= args.fps <= 60):
        raise user_error("--video must be 0..120 seconds and --fps 1..60")
    if not 1 <= args.quality <= 100:
        raise user_error(f"--quality must be 1..100, got {args.quality}")


def _say(args: argparse.Namespace, path: Path, truth: dict[str, Any]) -> None:
    if args.json:
        print(json.dumps({"image": str(path), "seed": truth["seed"], "cards": len(truth["cards"]),
                          "sets": len(truth["sets"]), "table": truth["table"]}))
    elif args.count <= 20 or not sys.stdout.isatty():
        n_sets = len(truth["sets"])
        print(f"wrote {path}: {len(truth['cards'])} cards on {truth['table']}, "
              f"{n_sets} SET{'' if n_sets == 1 else 's'}")
