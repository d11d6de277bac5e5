"""Benchmark the card reader: accuracy on held-out photos, on another deck, and read time.

Prints markdown: per-attribute and whole-card accuracy on the held-out set-photos crops (source
photos never used in training) and on the errcw crops (another deck print, never trained on),
their confusion matrices (rows = truth, columns = read), and the time to read one card (features
+ models), median over the held-out crops read one at a time and in batches of 12.

Usage: python bench/bench_cards.py [--data ../shared/data] [--model models/card_reader.json]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from vision import training
from vision.cardreader import CardReader

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--model", type=Path, default=None)
    args = parser.parse_args(argv)
    if not (args.data / "set-photos" / "cards.csv").is_file():
        print(f"bench_cards: no labelled crops under {args.data}; pass --data", file=sys.stderr)
        return 1
    reader = CardReader.load(args.model)
    crops = training.load_labelled_crops(args.data / "set-photos")
    held_out = [c for c in crops if training.split_of(c.source) == "test"]
    sets = {"set-photos held-out photos": held_out}
    errcw = args.data / "errcw-set-solver"
    if (errcw / "cards.csv").is_file():
        sets["errcw (other deck)"] = training.load_labelled_crops(errcw, with_sources=False)

    print("## Card reader accuracy\n")
    print("| data | crops | count | color | shading | shape | whole card | uncertain | wrong but certain |")
    print("|---|---|---|---|---|---|---|---|---|")
    reports = {}
    for name, items in sets.items():
        report = training.accuracy_report(reader, items)
        reports[name] = report
        cells = " | ".join(f"{report['attributes'][a]:.2%}" for a in training.ATTRIBUTES)
        print(f"| {name} | {report['crops']} | {cells} | {report['whole_card']:.2%} | "
              f"{report['uncertain']:.2%} | {report['wrong_certain']:.2%} |")
    for name, report in reports.items():
        print(f"\n### Confusion matrices: {name} (rows = truth, columns = read)\n")
        for attribute in training.ATTRIBUTES:
            classes = training.CLASSES[attribute]
            print(f"| {attribute} | " + " | ".join(classes) + " |")
            print("|---" * (len(classes) + 1) + "|")
            for truth, row in zip(classes, report["confusion"][attribute]):
                print(f"| **{truth}** | " + " | ".join(str(v) for v in row) + " |")
            print()
        if report["mistakes"]:
            print("Mistakes: " + "; ".join(report["mistakes"][:20]))

    cards = [training.read_canonical(c.path) for c in held_out[::5]]
    reader.read(cards[:12])  # warm-up
    single = []
    for card in cards:
        start = time.perf_counter()
        reader.read([card])
        single.append(time.perf_counter() - start)
    batches = []
    for i in range(0, len(cards) - 11, 12):
        start = time.perf_counter()
        reader.read(cards[i:i + 12])
        batches.append((time.perf_counter() - start) / 12)
    print("\n## Read time per card (features + models, this machine)\n")
    print("| mode | cards | median ms/card |")
    print("|---|---|---|")
    print(f"| one at a time | {len(single)} | {1000 * float(np.median(single)):.3f} |")
    print(f"| batches of 12 | {12 * len(batches)} | {1000 * float(np.median(batches)):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
