"""`setfinder train`: rebuild the card-reader models in models/ from the labelled card crops."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from setfinder.errors import UserError
from setfinder.progress import progress

NAME = "train"
ORDER = 80

_REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = _REPO.parent / "shared" / "data"
DEFAULT_OUT = _REPO / "models"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        NAME,
        help="rebuild the card-reader models from labelled card crops",
        description="Rebuild models/card_reader.json from the labelled crops in DATA/set-photos "
                    "(split by source photo; fixed seeds, so the same data gives the same model) "
                    "and print held-out accuracy, also on DATA/errcw-set-solver when present. "
                    "Takes about 15 minutes on 2 cores (most of it generating and detecting 1,150 scenes, "
                    "one process per core).",
        epilog="Example: setfinder train --data ../shared/data --out models/",
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help=f"folder holding set-photos/cards.csv (default: {DEFAULT_DATA})")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"folder to write card_reader.json into (default: {DEFAULT_OUT})")
    parser.add_argument("--generated", type=int, default=None, metavar="N",
                        help="generated photos of each of the 81 cards to add to training "
                             "(default: 8; 0 = photo crops only)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, metavar="N",
                        help="processes generating and detecting the scenes (default: one per core; "
                             "the model is the same whatever N)")
    parser.add_argument("--json", action="store_true", help="print the accuracy report as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from vision import training

    table = args.data / "set-photos" / "cards.csv"
    if not table.is_file():
        raise UserError(f"no labelled crops at {table}; pass --data pointing at the folder that holds "
                        "set-photos/cards.csv (the shared data, e.g. ../shared/data)")
    rounds = training.SYNTHETIC_ROUNDS if args.generated is None else args.generated
    if rounds < 0:
        raise UserError(f"--generated must be 0 or more, got {rounds}")
    if args.workers < 1:
        raise UserError(f"--workers must be 1 or more, got {args.workers}")
    try:
        model = training.train_card_reader(args.data, progress=lambda items, total, label:
                                           progress(items, total=total, label=label),
                                           synthetic_rounds=rounds, workers=args.workers)
    except (FileNotFoundError, ValueError) as error:
        raise UserError(f"training failed: {error}") from None
    path = training.save_model(model, args.out)
    if args.json:
        print(json.dumps(model["report"], indent=1))
        return 0
    print(f"wrote {path}")
    for name, report in model["report"].items():
        attributes = ", ".join(f"{a} {v:.2%}" for a, v in report["attributes"].items())
        print(f"{name} ({report['crops']} crops): whole card {report['whole_card']:.2%}; {attributes}; "
              f"uncertain {report['uncertain']:.2%}")
    return 0
