"""The scene generator: exact corners, reproducible seeds, every card, any board size, the CLI."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from core import Card, find_sets, full_deck
from setfinder.cli import main
from vision.canonical import CARD_HEIGHT, CARD_WIDTH, warp_card
from vision.render import PrintStyle, render_card
from vision.scene import deal_cards, generate_scene, render_training_card


def _blur(image: np.ndarray) -> np.ndarray:
    return cv2.GaussianBlur(image.astype(np.float32), (0, 0), 2.0)


def _card_error(image: np.ndarray, corners: np.ndarray, reference: np.ndarray) -> float:
    """Mean absolute difference, away from the rounded corners, between the card warped from
    ``corners`` and the reference drawing (both blurred: fine stripes alias differently at
    different scales)."""
    inner = (slice(8, CARD_HEIGHT - 8), slice(8, CARD_WIDTH - 8))
    return float(np.abs(_blur(warp_card(image, corners)) - reference)[inner].mean())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_truth_corners_are_where_the_cards_are(seed: int) -> None:
    image, truth = generate_scene(seed, 9, (800, 600), table="black", effects=0.0, partial=False, overlap=False)
    assert len(truth["cards"]) == 9
    for entry in truth["cards"]:
        corners = np.array(entry["corners"])
        reference = _blur(render_card(Card.parse(entry["card"]), style=PrintStyle.standard()))
        exact = _card_error(image, corners, reference)
        assert exact < 4.0, entry
        # Moving the corners by 2 px, or starting from the wrong corner, fits clearly worse.
        for wrong in (corners + [2.0, 0.0], corners + [0.0, -2.0], np.roll(corners, 1, axis=0)):
            assert _card_error(image, wrong, reference) > exact + 0.8, entry


def test_card_edges_lie_on_the_truth_outline() -> None:
    """Just inside each edge midpoint is white card, just outside is the black table."""
    image, truth = generate_scene(4, 12, table="black", effects=0.0, partial=False, overlap=False)
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(int)
    for entry in truth["cards"]:
        corners = np.array(entry["corners"])
        center = corners.mean(axis=0)
        for a, b in zip(corners, np.roll(corners, -1, axis=0)):
            mid = (a + b) / 2
            inward = (center - mid) / np.linalg.norm(center - mid)
            inside = np.round(mid + inward * 2.5).astype(int)
            outside = np.round(mid - inward * 2.5).astype(int)
            assert grey[inside[1], inside[0]] > 180
            assert grey[outside[1], outside[0]] < 60


def test_seed_reproduces_the_scene_exactly() -> None:
    image_a, truth_a = generate_scene(42, 12)
    image_b, truth_b = generate_scene(42, 12)
    image_c, truth_c = generate_scene(43, 12)
    assert np.array_equal(image_a, image_b)
    assert truth_a == truth_b
    assert not np.array_equal(image_a, image_c)
    assert json.loads(json.dumps(truth_a)) == truth_a  # JSON-able as it stands


def test_every_card_renders_with_its_own_look() -> None:
    faces = {card: render_card(card) for card in full_deck()}
    assert all(face.shape == (CARD_HEIGHT, CARD_WIDTH, 3) and face.dtype == np.uint8 for face in faces.values())
    # All 81 drawings differ from each other.
    keys = {face.tobytes() for face in faces.values()}
    assert len(keys) == 81
    # Ink lies where the attributes say: more symbols, more ink; solid more than outline.
    ink = {card: int((faces[card].min(axis=2) < 150).sum()) for card in faces}
    one = Card.parse("1 red solid oval")
    three = Card.parse("3 red solid oval")
    outline = Card.parse("3 red outline oval")
    assert ink[three] > 2.5 * ink[one]
    assert ink[three] > 3 * ink[outline]


@pytest.mark.parametrize("n_cards", [3, 21])
def test_small_and_large_boards(n_cards: int) -> None:
    image, truth = generate_scene(7, n_cards, (960, 720), partial=False)
    assert image.shape == (720, 960, 3) and image.dtype == np.uint8
    assert len(truth["cards"]) == n_cards
    assert len({entry["card"] for entry in truth["cards"]}) == n_cards
    for entry in truth["cards"]:
        xs, ys = zip(*entry["corners"])
        assert 0 <= min(xs) and max(xs) <= 960 and 0 <= min(ys) and max(ys) <= 720
        assert entry["visibility"] in ("full", "occluded")
        assert entry["partial"] is False


def test_cut_cards_are_labelled_partial() -> None:
    found = 0
    for seed in range(6):
        _, truth = generate_scene(seed, 12, (640, 480), partial=True)
        for entry in truth["cards"]:
            xs, ys = zip(*entry["corners"])
            cut = min(xs) < -0.5 or min(ys) < -0.5 or max(xs) > 639.5 or max(ys) > 479.5
            assert entry["partial"] == cut
            assert (entry["visibility"] == "partial") == cut
            found += cut
    assert found > 0


def test_an_overlapped_card_is_labelled_occluded() -> None:
    _, truth = generate_scene(5, 9, overlap=True, partial=False, effects=0.0)
    fractions = sorted(entry["visible_fraction"] for entry in truth["cards"])
    assert fractions[0] < 0.92
    assert truth["cards"][[e["visible_fraction"] for e in truth["cards"]].index(fractions[0])]["visibility"] == "occluded"
    assert fractions[-1] >= 0.97


@pytest.mark.parametrize("deal", ["sets", "no-set"])
def test_deals_with_and_without_sets(deal: str) -> None:
    rng = np.random.default_rng(0)
    for _ in range(5):
        cards = deal_cards(12, rng, deal)
        assert len(set(cards)) == 12
        assert bool(find_sets(cards)) == (deal == "sets")
    with pytest.raises(ValueError):
        deal_cards(21, rng, "no-set")


def test_truth_lists_the_sets_on_the_table() -> None:
    _, truth = generate_scene(3, 12, deal="sets", partial=False)
    cards = [Card.parse(entry["card"]) for entry in truth["cards"]]
    assert len(truth["sets"]) == len(find_sets(cards)) > 0


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="size"):
        generate_scene(0, 12, (10, 10))
    with pytest.raises(ValueError, match="table"):
        generate_scene(0, 12, table="lava")
    with pytest.raises(ValueError, match="layout"):
        generate_scene(0, 12, layout="pyramid")


def test_training_cards_are_canonical_and_vary() -> None:
    rng = np.random.default_rng(1)
    card = Card.parse("2 green striped squiggle")
    crops = [render_training_card(card, rng) for _ in range(4)]
    assert all(c.shape == (CARD_HEIGHT, CARD_WIDTH, 3) and c.dtype == np.uint8 for c in crops)
    assert len({c.tobytes() for c in crops}) == 4


def test_cli_writes_scenes_and_truth(tmp_path, capsys) -> None:
    code = main(["synth", "--seed", "5", "--cards", "6", "--count", "2", "--size", "320x240", "--out", str(tmp_path)])
    assert code == 0
    for seed in (5, 6):
        image = cv2.imread(str(tmp_path / f"scene-{seed}.jpg"))
        truth = json.loads((tmp_path / f"scene-{seed}.json").read_text())
        assert image.shape == (240, 320, 3)
        assert truth["seed"] == seed and len(truth["cards"]) == 6


def test_cli_refuses_an_impossible_board(tmp_path, capsys) -> None:
    code = main(["synth", "--cards", "21", "--deal", "no-set", "--out", str(tmp_path)])
    assert code == 1
    assert "20" in capsys.readouterr().err


def test_clip_truth_follows_the_cards_taken_and_dealt() -> None:
    from vision.video import cards_on_table, generate_clip

    frames = list(generate_clip(9, seconds=2.0, fps=6, size=(320, 240)))
    assert len(frames) == 12
    truths = [truth for _, truth in frames]
    assert all(image.shape == (240, 320, 3) for image, _ in frames)
    first, last = set(cards_on_table(truths[0])), set(cards_on_table(truths[-1]))
    took = [Card.parse(c) for t in truths for c in t["events"].get("took", [])]
    dealt = [Card.parse(c) for t in truths for c in t["events"].get("dealt", [])]
    assert len(took) == 3 and len(dealt) == 3
    assert find_sets(took) == [(0, 1, 2)]  # the hand takes a SET
    assert set(took) <= first and not set(took) & last
    assert set(dealt) <= last and not set(dealt) & first
    assert last == (first - set(took)) | set(dealt)
    counts = [len(cards_on_table(t)) for t in truths]
    assert counts[0] == counts[-1] == 12 and min(counts) == 9
    # Cards leave the table only while taking and arrive only while dealing.
    for before, after in zip(truths, truths[1:]):
        gone = set(cards_on_table(before)) - set(cards_on_table(after))
        new = set(cards_on_table(after)) - set(cards_on_table(before))
        assert not gone or after["phase"] == "taking"
        assert not new or after["phase"] == "dealing"
    assert any(e.get("in_hand") for t in truths for e in t["cards"])


def test_write_clip_makes_a_video_and_truth_lines(tmp_path) -> None:
    from vision.video import write_clip

    video, truth_path, frames = write_clip(tmp_path / "clip", 4, seconds=1.0, fps=5, size=(320, 240), n_cards=6)
    lines = truth_path.read_text().splitlines()
    assert frames == 5 == len(lines)
    capture = cv2.VideoCapture(str(video))
    read = 0
    while capture.read()[0]:
        read += 1
    capture.release()
    assert read == 5


def test_cli_writes_a_clip_with_truth_lines(tmp_path) -> None:
    code = main(["synth", "--seed", "2", "--cards", "6", "--video", "1", "--fps", "4", "--size", "320x240",
                 "--out", str(tmp_path), "--name", "clip"])
    assert code == 0
    videos = list(tmp_path.glob("clip.mp4")) + list(tmp_path.glob("clip.avi"))
    assert len(videos) == 1 and videos[0].stat().st_size > 0
    truths = [json.loads(line) for line in (tmp_path / "clip.jsonl").read_text().splitlines()]
    assert [t["frame"] for t in truths] == [0, 1, 2, 3]


def test_sample_images_match_their_truth() -> None:
    """The committed samples: every image has truth of its own size, the no-SET table has none."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "sample_images"
    images = sorted(folder.glob("*.jpg"))
    if not images:
        pytest.skip("sample_images/ not generated yet")
    for path in images:
        truth = json.loads(path.with_suffix(".json").read_text())
        image = cv2.imread(str(path))
        assert image.shape[:2] == (truth["height"], truth["width"]), path.name
        whole = [Card.parse(e["card"]) for e in truth["cards"] if not e["partial"]]
        assert len(truth["sets"]) == len(find_sets(whole)), path.name
    no_set = json.loads((folder / "table-12-no-set.json").read_text())
    cards = [Card.parse(e["card"]) for e in no_set["cards"]]
    assert len(cards) == 12 and find_sets(cards) == []
    sets = json.loads((folder / "table-12-sets.json").read_text())
    assert find_sets([Card.parse(e["card"]) for e in sets["cards"]])


def test_a_hand_over_a_card_makes_it_occluded() -> None:
    from vision.scene import build_scene, draw_scene

    spec = build_scene(3, 6, (640, 480), layout="grid", tilt=0.0, partial=False, overlap=False, effects=0.0)
    _, clear = draw_scene(spec)
    target = np.array(clear["cards"][0]["corners"]).mean(axis=0)
    hand = {"kind": "hand", "tip": target.tolist(), "direction": float(np.pi / 2), "skin": [0.4, 0.5, 0.7]}
    image, covered = draw_scene(spec, hand=hand)
    assert clear["cards"][0]["visibility"] == "full"
    assert covered["cards"][0]["visibility"] == "occluded"
    assert covered["cards"][0]["visible_fraction"] < 0.9
    # The palm (the arm comes from below) is skin coloured where the table or card showed.
    palm = np.round(target + [0.0, spec.card_px * 1.3]).astype(int)
    assert np.abs(image[palm[1], palm[0]].astype(int) - [102, 127, 178]).max() < 30
