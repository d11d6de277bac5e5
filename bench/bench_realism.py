"""Realism check of the scene generator: train the card reader on generated cards only, score it
on real card crops.

If renders look like real cards, a reader trained on renders alone reads real crops well; the
gap to the reader trained on real crops (models/card_reader.json) measures what the renders
still miss. The reader is the project's own (`vision.features` + `vision.training`): the same
features and the same per-attribute logistic regression, fitted here on
`vision.scene.render_training_card` crops (random deck print, table, light, camera, blur,
noise, JPEG, corner jitter).

Real data (never used for training here): every crop of ../shared/data/set-photos/cards and
../shared/data/errcw-set-solver/cards.

Usage:
    nice python3 bench/bench_realism.py                 # 81 x 40 generated cards, all real crops
    python3 bench/bench_realism.py --per-card 10 --limit 2000   # a quick look
    python3 bench/bench_realism.py --sheet compare.png ...  # also a side-by-side picture
Prints markdown tables: per-attribute and whole-card accuracy per deck, and the most frequent
confusions.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.cards import full_deck  # noqa: E402
from setfinder.progress import progress  # noqa: E402
from vision import features, training  # noqa: E402
from vision.cardreader import CardReader, ModelError  # noqa: E402
from vision.features import FEATURE_NAMES, card_features  # noqa: E402
from vision.scene import render_training_card  # noqa: E402
from vision.training import (  # noqa: E402
    ATTRIBUTES,
    CLASSES,
    LabelledCrop,
    export_attribute,
    fit_attribute,
    load_labelled_crops,
    read_canonical,
    split_of,
)

DATA = REPO.parent / "shared" / "data"
DECKS = {"set-photos": DATA / "set-photos", "errcw": DATA / "errcw-set-solver"}


def _progress(items: Any, total: int, label: str) -> Any:
    return progress(items, total=total, label=label)


def generated_table(per_card: int, seed: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Features (n, N_FEATURES) and class indices of ``per_card`` generated crops of each card."""
    rows: list[np.ndarray] = []
    targets: dict[str, list[int]] = {name: [] for name in ATTRIBUTES}
    jobs = [(card, k) for card in full_deck() for k in range(per_card)]
    for card, k in _progress(jobs, len(jobs), "rendering"):
        rng = np.random.default_rng([seed, card.index, k])
        rows.append(card_features(render_training_card(card, rng)))
        labels = {"count": str(card.count), "color": card.color, "shading": card.shading, "shape": card.shape}
        for name in ATTRIBUTES:
            targets[name].append(CLASSES[name].index(labels[name]))
    return np.stack(rows), {name: np.asarray(v, np.int64) for name, v in targets.items()}


def train_on_generated(per_card: int, seed: int) -> CardReader:
    """A card reader fitted on generated crops only, the way `vision.training` fits the real one
    (the same features, per-attribute feature groups when the reader has them, the same
    classifiers: a small network where `training.HIDDEN_UNITS` says so); thresholds are fixed at
    0.6 (not calibrated: no real data is used)."""
    X, y = generated_table(per_card, seed)
    groups = getattr(features, "FEATURE_GROUPS", None)
    attributes = {}
    for name in ATTRIBUTES:
        names = list(groups[name]) if groups else list(FEATURE_NAMES)
        columns = [FEATURE_NAMES.index(f) for f in names]
        hidden = getattr(training, "HIDDEN_UNITS", {}).get(name, 0)
        exported = export_attribute(fit_attribute(X[:, columns], y[name], seed, hidden), len(CLASSES[name]))
        exported.update({"features": names, "classes": list(CLASSES[name]), "threshold": 0.6})
        attributes[name] = exported
    return CardReader.from_dict({"format": training.MODEL_FORMAT, "features": list(FEATURE_NAMES),
                                 "attributes": attributes}, source="generated-only model")


def score(reader: CardReader, crops: list[LabelledCrop], label: str) -> dict[str, Any]:
    """Per-attribute and whole-card accuracy, and the confusions (truth -> read) with counts."""
    right: Counter[str] = Counter()
    whole = 0
    confusions: Counter[str] = Counter()
    batch = 256
    for start in _progress(range(0, len(crops), batch), (len(crops) + batch - 1) // batch, label):
        chunk = crops[start:start + batch]
        readings = reader.read([read_canonical(c.path) for c in chunk])
        for crop, reading in zip(chunk, readings):
            got = {"count": str(reading.card.count), "color": reading.card.color,
                   "shading": reading.card.shading, "shape": reading.card.shape}
            ok = True
            for name in ATTRIBUTES:
                if got[name] == crop.labels[name]:
                    right[name] += 1
                else:
                    ok = False
                    confusions[f"{name}: {crop.labels[name]} -> {got[name]}"] += 1
            whole += ok
    n = max(1, len(crops))
    return {"n": len(crops), "whole": whole / n, **{name: right[name] / n for name in ATTRIBUTES},
            "confusions": confusions}


def comparison_sheet(path: Path, seed: int) -> None:
    """Write a PNG: for 9 cards, a real set-photos crop, the errcw crop, the clean render and two
    generated training crops, side by side (columns), one card per row."""
    import cv2

    from core.cards import Card
    from vision.render import render_card

    names = ["3 purple striped squiggle", "2 green solid oval", "1 red outline diamond", "2 red striped diamond",
             "3 green outline squiggle", "1 purple solid oval", "2 purple striped oval", "3 red solid squiggle",
             "1 green striped diamond"]
    rows = []
    rng = np.random.default_rng(seed)
    for name in names:
        card = Card.parse(name)
        folder = "-".join(name.split())
        real = sorted((DECKS["set-photos"] / "cards" / folder).glob("*.jpg"))
        tiles = [read_canonical(real[len(real) // 2]) if real else np.zeros((250, 160, 3), np.uint8)]
        errcw = DECKS["errcw"] / "cards" / f"{folder}.jpg"
        tiles.append(read_canonical(errcw) if errcw.is_file() else np.zeros((250, 160, 3), np.uint8))
        tiles += [render_card(card), render_training_card(card, rng), render_training_card(card, rng)]
        rows.append(np.hstack(tiles))
    cv2.imwrite(str(path), np.vstack(rows))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-card", type=int, default=40, help="generated crops per card (default 40)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=0, help="score at most this many crops per deck (0 = all)")
    parser.add_argument("--sheet", metavar="PNG", help="also write a real-vs-generated comparison sheet here")
    args = parser.parse_args()
    if args.sheet:
        comparison_sheet(Path(args.sheet), args.seed)

    decks = {}
    for name, folder in DECKS.items():
        if not (folder / "cards.csv").is_file():
            print(f"skipping {name}: {folder}/cards.csv not found", file=sys.stderr)
            continue
        crops = load_labelled_crops(folder, with_sources=(name == "set-photos"))
        if args.limit and len(crops) > args.limit:
            picks = np.random.default_rng(0).choice(len(crops), args.limit, replace=False)
            crops = [crops[i] for i in sorted(picks)]
        decks[name] = crops
        if name == "set-photos":
            # The real-trained reader learnt from 70% of these photos: compare on its held-out 20%.
            decks["set-photos held-out"] = [c for c in crops if split_of(c.source) == "test"]
    if not decks:
        print("no real crops found under ../shared/data: nothing to score", file=sys.stderr)
        return 1

    start = time.perf_counter()
    generated = train_on_generated(args.per_card, args.seed)
    train_s = time.perf_counter() - start
    readers = {"generated only": generated}
    try:
        readers["real (models/card_reader.json)"] = CardReader.load()
    except ModelError as error:
        print(f"note: no real-trained model to compare with ({error})", file=sys.stderr)

    results = {(who, deck): score(reader, crops, f"{deck} / {who}")
               for who, reader in readers.items() for deck, crops in decks.items()}

    print(f"\nTrained on {81 * args.per_card} generated crops ({args.per_card} per card, seed {args.seed}) "
          f"in {train_s:.0f} s; scored on real crops.\n")
    print("(The real-trained reader was fitted on 70% of the set-photos photos: compare the two readers "
          "on 'set-photos held-out', the photos neither reader saw.)\n")
    print("| reader | deck | crops | count | color | shading | shape | whole card |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for (who, deck), r in results.items():
        cells = " | ".join(f"{100 * r[name]:.1f}%" for name in (*ATTRIBUTES, "whole"))
        print(f"| {who} | {deck} | {r['n']} | {cells} |")
    for deck in decks:
        if deck.endswith("held-out"):
            continue
        r = results[("generated only", deck)]
        print(f"\nMost frequent confusions, generated-only reader on {deck} (truth -> read):\n")
        print("| confusion | crops |")
        print("|---|---:|")
        for text, count in r["confusions"].most_common(10):
            print(f"| {text} | {count} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
