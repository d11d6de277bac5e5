"""`setfinder referee`: typed commands over board files and generated photo sequences; exact
output, the log, and its replay."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from core.board import Board, Corners, SeenCard
from core.cards import Card, easy_deck, find_sets, is_set
from core.referee import Referee, read_log, replay
from setfinder.cli import main
from setfinder.commands.referee import run_commands

sys.path.insert(0, str(Path(__file__).parent))
from test_referee import RealTable, layout_without_set  # noqa: E402  (shared table simulator)


def board_line(table: RealTable) -> str:
    from vision.report import board_to_json

    return json.dumps(board_to_json(table.board()))


def cli(tmp_path: Path, args: Sequence[str], commands: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "setfinder", "referee", *args], input="\n".join(commands) + "\n",
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)


def test_help_has_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["referee", "--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0
    assert "Example: setfinder referee --players Ana,Ben" in out and "claim Ana 3 7 9" in out


@pytest.mark.parametrize("args, message", [
    (["--boards", "b.jsonl"], "name the players: --players Ana,Ben"),
    (["--players", "Ana,Ana", "--boards", "b.jsonl"], "bad --players: player names must differ"),
    (["--players", "Ana"], "say where the table comes from"),
    (["--players", "Ana", "--photos", "nowhere"], "--photos nowhere: not a folder"),
    (["--players", "Ana", "--boards", "missing.jsonl"], "--boards missing.jsonl: No such file"),
    (["--replay", "missing.jsonl"], "--replay missing.jsonl: No such file"),
])
def test_usage_errors_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "b.jsonl").write_text("")
    result = cli(tmp_path, args, [])
    assert result.returncode == 1
    assert result.stderr.startswith(f"setfinder: error: {message}") and result.stderr.count("\n") == 1


def test_a_session_over_board_files_gives_exact_answers_and_a_replayable_log(tmp_path: Path) -> None:
    table = RealTable(4)
    lines = [board_line(table)]
    first = table.board()
    triple = find_sets([s.card for s in first.cards])[0]
    positions = " ".join(str(i + 1) for i in triple)
    table.take([first.cards[i].card for i in triple])
    lines.append(board_line(table))
    (tmp_path / "boards.jsonl").write_text("\n".join(lines) + "\n")
    wrong = next(k for k in range(3, 13) if not is_set(*(first.cards[i].card for i in (0, 1, k - 1))))
    commands = [f"Ana 1 2 {wrong}", f"claim Ben {positions}", "noset", "next", "undo",
                "Cleo 1 2 3", "Ben 4 4 5", "Ben 1 2 13", "Ben 1 two 3", "foo", "end", "Ana 1 2 3"]
    result = cli(tmp_path, ["--players", "Ana,Ben", "--boards", "boards.jsonl", "--log", "game.jsonl"], commands)
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert out[0] == "[boards.jsonl line 1] Round 1 dealt by Ana: 12 cards, positions 1-12."
    assert out[1].startswith("Not a SET: ") and out[1].endswith(". Ana -1")
    assert out[2] == "SET! Ben +1. Take the three cards; dealer, deal three more."
    assert out[3:11] == [
        "error: the table is being dealt: show it after the dealer has acted, then call",
        "[boards.jsonl line 2] Table accepted: 12 cards, 66 in the pile.",
        "error: the table changed after the last call: it can no longer be undone",
        "error: unknown player 'Cleo': the players are Ana, Ben",
        "error: position 4 is named twice: a SET is three different cards",
        "error: no card at position 13: the table has positions 1 to 12",
        "error: positions are numbers: claim Ben 3 7 9 (got 1 two 3)",
        "error: unknown command 'foo'; type 'help' for the list",
    ]
    assert out[11:] == ["round  dealer    Ana    Ben",
                        "1      Ana        -1      1 (unfinished)",
                        "total             -1      1",
                        "Winner: Ben with 1",
                        "(game ended before its last round was over)"]  # nothing after "end"
    events = read_log((tmp_path / "game.jsonl").read_text().splitlines())
    assert [e["event"] for e in events] == ["start", "table", "claim", "claim", "table", "end"]
    assert events[-1]["scores"] == {"Ana": -1, "Ben": 1}
    replayed = cli(tmp_path, ["--replay", "game.jsonl"], [])
    assert replayed.returncode == 0 and replayed.stdout.splitlines()[-1] == "Replayed scores match the log."
    # A log whose recorded scores were altered no longer matches its own replay.
    events[-1]["scores"] = {"Ana": 5, "Ben": 1}
    (tmp_path / "forged.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n")
    forged = cli(tmp_path, ["--replay", "forged.jsonl"], [])
    assert forged.returncode == 1 and "differ from the log's" in forged.stdout


def test_json_output_is_the_log(tmp_path: Path) -> None:
    (tmp_path / "boards.jsonl").write_text(board_line(RealTable(4)) + "\n")
    result = cli(tmp_path, ["--players", "Ana", "--boards", "boards.jsonl", "--json", "--log", "log.jsonl"],
                 ["Bob 1 2 3"])
    printed = [json.loads(line) for line in result.stdout.splitlines()]
    assert printed[2] == {"event": "message", "message": "error: unknown player 'Bob': the players are Ana"}
    assert [p for p in printed if p["event"] != "message"] == read_log(
        (tmp_path / "log.jsonl").read_text().splitlines())


class ListSource:
    """Views from a list of boards made on demand by the test (a table that plays along)."""

    def __init__(self) -> None:
        self.queue: list[Any] = []

    def next_view(self) -> Any:
        return self.queue.pop(0) if self.queue else None


def test_a_whole_game_through_typed_commands(tmp_path: Path) -> None:
    from setfinder.commands.referee import View

    referee = Referee(["Ana", "Ben"], easy=True)
    deck = easy_deck()
    random.Random(8).shuffle(deck)
    table = RealTable(0, deck, base=9)
    source = ListSource()
    out = io.StringIO()
    source.queue.append(View("deal", table.board()))
    from setfinder.commands.referee import Session

    session = Session(referee, source, out)
    session.next_view()
    expected = {"Ana": 0, "Ben": 0}
    turn = 0
    while not referee.is_over:
        cards = [s.card for s in referee.table]
        sets = find_sets(cards)
        player = ("Ana", "Ben")[turn % 2]
        turn += 1
        if sets:
            taken = [cards[i] for i in sets[0]]
            session.execute(f"{player} " + " ".join(str(i + 1) for i in sets[0]))
            expected[player] += 1
            if referee.is_over:
                break
            table.take(taken)
        else:
            session.execute(f"noset {player}")
            if not table.pile:
                break
            table.deal_three()
        source.queue.append(View(f"view {turn}", table.board()))
        session.execute("next")
    session.execute("end")
    text = out.getvalue()
    assert referee.scores == expected
    assert "error" not in text and "not accepted" not in text
    winner = max(expected, key=lambda p: expected[p])
    assert text.rstrip().splitlines()[-1] in (f"Winner: {winner} with {expected[winner]}",
                                              f"Tie: Ana, Ben with {expected['Ana']}")
    assert replay(referee.events).scores == expected


# -- generated photos through the recognizer -------------------------------------------------------
class TruthReader:
    """Stands in for the recognizer on generated photos: each photo, in order, reads as its
    ground truth. Tests the photo plumbing (files, decoding, overlays) apart from recognition."""

    def __init__(self, camera: PhotoTable) -> None:
        self.boards = list(camera.truth_boards)

    def read_board(self, image: Any, scale: float = 1.0) -> Any:
        return self.boards.pop(0)


def _reader(kind: str) -> Any:
    """A function of the photographed table giving the reader; skips at once when the card
    reader model is missing (before any photo is generated)."""
    if kind == "truth":
        return TruthReader
    from vision.recognize import Recognizer

    try:
        recognizer = Recognizer()
    except (OSError, ValueError) as error:
        pytest.skip(f"card reader model not available ({error})")
    return lambda camera: recognizer


class PhotoTable:
    """A table photographed by the scene generator: one seed (same table, light and camera),
    the cards laid out in slot order; positions come from the truth corners in reading order.
    ``truth_boards`` holds the Board each photo shows, for `TruthReader`."""

    def __init__(self, folder: Path, seed: int) -> None:
        self.folder, self.seed, self.count = folder, seed, 0
        self.positions: dict[Card, int] = {}
        self.truth_boards: list[Any] = []

    def photograph(self, cards: Sequence[Card]) -> None:
        import cv2

        from vision.recognize import reading_order
        from vision.scene import generate_scene

        image, truth = generate_scene(self.seed, len(cards), cards=list(cards), layout="grid", tilt=5.0,
                                      partial=False, overlap=False, effects=0.0, distractors=False)
        self.count += 1
        assert cv2.imwrite(str(self.folder / f"photo-{self.count:02d}.png"), image)
        corners: list[Corners] = [
            ((float(a[0]), float(a[1])), (float(b[0]), float(b[1])), (float(c[0]), float(c[1])),
             (float(d[0]), float(d[1])))
            for a, b, c, d in (entry["corners"] for entry in truth["cards"])]
        order = reading_order(corners)
        self.positions = {Card.parse(truth["cards"][i]["card"]): n for n, i in enumerate(order, 1)}
        self.truth_boards.append(Board(tuple(SeenCard(Card.parse(truth["cards"][i]["card"]), corners[i], 1.0)
                                             for i in order), truth["width"], truth["height"]))

    def ids(self, cards: Sequence[Card]) -> str:
        return " ".join(str(self.positions[c]) for c in cards)


@pytest.mark.parametrize("reader", ["truth", "recognizer"])
def test_a_game_refereed_from_generated_photos(tmp_path: Path, reader: str) -> None:
    """An easy-deck game photographed after every deal: claims right and wrong, a wrong "no SET",
    a taken card misread back on the table, deals of three, and the end of the game."""
    from setfinder.commands.referee import PhotoSource

    make_reader = _reader(reader)

    folder = tmp_path / "photos"
    folder.mkdir()
    camera = PhotoTable(folder, seed=31)
    deck = easy_deck()
    random.Random(5).shuffle(deck)
    slots, pile = deck[:9], deck[9:]
    camera.photograph(slots)
    commands: list[str] = []
    expected = {"Ana": 0, "Ben": 0}
    players = ("Ana", "Ben")
    flagged_once = False
    for turn in range(40):
        player = players[turn % 2]
        sets = find_sets(slots)
        if not sets:
            commands.append(f"noset {player}")
            if not pile:
                break
            slots, pile = slots + pile[:3], pile[3:]
        else:
            taken = [slots[i] for i in sets[0]]
            if turn % 3 == 1:  # a wrong claim first: -1, the cards stay
                wrong = next(t for t in ((0, 1, k) for k in range(2, len(slots)))
                             if not is_set(*(slots[i] for i in t)))
                commands.append(f"{player} {camera.ids([slots[i] for i in wrong])}")
                expected[player] -= 1
            if turn % 4 == 2:
                commands.append(f"noset {player} hint")  # refused, nothing changes
            commands.append(f"claim {player} {camera.ids(taken)}")
            expected[player] += 1
            if len(slots) <= 9 and pile:
                slots = [pile[taken.index(c)] if c in taken else c for c in slots]
                pile = pile[3:]
            else:
                slots = [c for c in slots if c not in taken]
            if not pile and not find_sets(slots):
                break
        camera.photograph(slots)
        commands.append("next")
        if sets and not flagged_once:  # then a photo in which a taken card is read back: flagged
            camera.photograph([taken[0]] + slots[1:])
            camera.photograph(slots)  # and a good view of the same table again
            commands += ["next", "next"]
            flagged_once = True
    out = io.StringIO()
    referee = Referee(list(players), easy=True)
    session = run_commands(referee, PhotoSource(folder, make_reader(camera)), commands, out)
    text = out.getvalue()
    assert "error" not in text, text
    assert text.count("Table not accepted") == 1 and "was taken in" in text, text
    assert referee.is_over and referee.scores == expected, text
    assert session.referee.summary().complete
    rebuilt = replay(referee.events)
    assert rebuilt.scores == expected
    assert [{**e, "time": None} for e in rebuilt.events] == [{**e, "time": None} for e in referee.events]


@pytest.mark.parametrize("reader", ["truth", "recognizer"])
def test_no_set_from_generated_photos_deals_three_and_goes_back_to_twelve(tmp_path: Path, reader: str) -> None:
    from setfinder.commands.referee import PhotoSource

    make_reader = _reader(reader)

    folder = tmp_path / "photos"
    folder.mkdir()
    camera = PhotoTable(folder, seed=11)  # a dark wood table
    order = layout_without_set(seed=2)
    slots, pile = order[:12], order[12:]
    camera.photograph(slots)
    commands = ["noset Ana"]
    slots = slots + pile[:3]
    camera.photograph(slots)
    commands.append("next")
    taken = [slots[i] for i in find_sets(slots)[0]]
    commands.append(f"claim Ben {camera.ids(taken)}")
    slots = [c for c in slots if c not in taken]
    camera.photograph(slots)
    commands += ["next", "table"]
    out = io.StringIO()
    referee = Referee(["Ana", "Ben"])
    run_commands(referee, PhotoSource(folder, make_reader(camera)), commands, out,
                 out_dir=tmp_path / "annotated")
    lines = out.getvalue().splitlines()
    first_view = referee.events[1]["seen"]
    assert isinstance(first_view, list)
    if any(card["uncertain"] or card["partial"] for card in first_view):
        # The reader was unsure of some card in the first photo: "no SET" must not be confirmed.
        assert lines[1].startswith("Cannot confirm no SET: card") and "Show the table more clearly" in lines[1]
        assert referee.scores == {"Ana": 0, "Ben": 0} and not referee.waiting_for_deal
        assert "Table accepted: 15 cards" not in out.getvalue()
        return
    assert lines[1] == "No SET among 12: deal three more", out.getvalue()
    assert lines[2] == "[photo-02.png] Table accepted: 15 cards, 66 in the pile."
    assert lines[3] == "SET! Ben +1. Take the three cards (no cards are dealt)."
    assert lines[4] == "[photo-03.png] Table accepted: 12 cards, 66 in the pile."
    assert referee.scores == {"Ana": 0, "Ben": 1}
    assert len(list((tmp_path / "annotated").glob("*.jpg"))) == 5  # 3 photos + 2 rulings


class BoardPerFrame:
    """Stands in for the recognizer: frame i reads as ``boards[i]`` (frames are numbered by a
    pixel written into each image)."""

    def __init__(self, boards: Sequence[Any]) -> None:
        self.boards = boards

    def read_board(self, image: Any) -> Any:
        return self.boards[int(image[0, 0, 0])]


def test_video_views_are_live_modes_steady_boards() -> None:
    """Frames go through live mode's tracker: the referee sees the table before the claim, the
    gaps while the dealer works, and the full table after the deal, never a flickering frame."""
    import numpy as np

    from setfinder.commands.referee import Session, SteadyViews
    from vision.frames import ArraySource

    table = RealTable(6)
    before = table.board()
    taken = [before.cards[i].card for i in find_sets([s.card for s in before.cards])[0]]
    gaps = Board(tuple(s for s in before.cards if s.card not in taken), before.width, before.height)
    table.take(taken)
    after = table.board()
    flicker = RealTable(6).board(uncertain=[before.cards[0].card])  # one odd frame
    boards = [before] * 8 + [flicker] + [before] * 4 + [gaps] * 10 + [after] * 12
    images = []
    for index in range(len(boards)):
        image = np.zeros((48, 64, 3), np.uint8)
        image[0, 0, 0] = index
        images.append(image)
    out = io.StringIO()
    referee = Referee(["Ana", "Ben"])
    session = Session(referee, SteadyViews(ArraySource(images), BoardPerFrame(boards)), out)
    session.next_view()
    ids = " ".join(str(n) for n in positions(referee, taken))
    session.execute(f"Ana {ids}")
    for _ in range(6):
        session.execute("next")
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[frames in memory frame ") and "Round 1 dealt by Ana" in lines[0]
    assert lines[1] == "SET! Ana +1. Take the three cards; dealer, deal three more."
    views = lines[2:lines.index("No more views of the table.")]
    # The tracker may publish the cards going and coming in steps; each step is a legal part of
    # the deal, and the flickering frame never becomes a view.
    assert 1 <= len(views) <= 4 and all(("] Table accepted" in v or "] Same" in v) for v in views), views
    assert views[-1].endswith("Table accepted: 12 cards, 66 in the pile.")
    assert [s.card for s in referee.table] == [s.card for s in after.cards] and referee.scores["Ana"] == 1


def positions(referee: Referee, cards: Sequence[Card]) -> list[int]:
    numbered = [s.card for s in referee.table]
    return [numbered.index(c) + 1 for c in cards]


class ClipTruthReader:
    """Stands in for the recognizer on a generated clip: frame i reads as its ground truth
    (cards lying on the table and not hidden by the hand, in reading order)."""

    def __init__(self, truths: Sequence[dict[str, Any]]) -> None:
        self.truths = truths

    def read_board(self, image: Any) -> Board:
        from vision.recognize import reading_order

        truth = self.truths[int(image[0, 0, 0])]
        entries = [e for e in truth["cards"] if not e.get("in_hand") and e["visibility"] != "occluded"]
        corners: list[Corners] = [
            ((float(a[0]), float(a[1])), (float(b[0]), float(b[1])), (float(c[0]), float(c[1])),
             (float(d[0]), float(d[1]))) for a, b, c, d in (e["corners"] for e in entries)]
        return Board(tuple(SeenCard(Card.parse(entries[i]["card"]), corners[i], 1.0, partial=bool(entries[i]["partial"]))
                           for i in reading_order(corners)), truth["width"], truth["height"])


@pytest.mark.parametrize("reader", ["truth", "recognizer"])
def test_a_generated_clip_a_hand_takes_the_claimed_set_and_deals_three(reader: str) -> None:
    """Live mode's tracker over a generated webcam clip: the referee sees the claimed SET leave
    (card by card) and three cards arrive, and accepts every steady view on the way."""
    from setfinder.commands.referee import Session, SteadyViews
    from vision.frames import ArraySource
    from vision.video import generate_clip

    recognizer = None if reader == "truth" else _reader(reader)(None)
    # The recognizer needs full-size frames; the truth reader does not (and small ones are quick).
    size = (480, 360) if recognizer is None else (960, 720)
    frames, truths = [], []
    # A dark wood table. (Until 2026-12-02 this was clip 6, whose striped cards are blurred
    # nearly to a tint: the reader retrained that day reads three of them striped but unsure
    # (0.85-0.95), and the referee then rightly will not judge a claim naming one; that path
    # has tests of its own. This test is of the flow of a claim, a take and a deal.)
    for image, truth in generate_clip(9, seconds=4, fps=10, size=size):
        frames.append(image)
        truths.append(truth)
    frames += [frames[-1]] * 10  # the table stays still after the deal
    truths += [truths[-1]] * 10
    if recognizer is None:
        for index, image in enumerate(frames):  # frame numbers for the truth reader
            frames[index] = image.copy()
            frames[index][0, 0, 0] = index
        recognizer = ClipTruthReader(truths)
    took = [Card.parse(name) for t in truths for name in t["events"].get("took", [])]
    final = sorted(Card.parse(e["card"]) for e in truths[-1]["cards"])
    out = io.StringIO()
    referee = Referee(["Ana", "Ben"])
    session = Session(referee, SteadyViews(ArraySource(frames, fps=10), recognizer), out)
    session.next_view()
    session.execute("Ana " + " ".join(str(n) for n in positions(referee, took)))
    for _ in range(8):
        session.execute("next")
    text = out.getvalue()
    assert "SET! Ana +1" in text and "not accepted" not in text and "error" not in text, text
    assert "Table accepted: 12 cards, 66 in the pile." in text, text
    assert referee.scores == {"Ana": 1, "Ben": 0} and len(referee.table) == 12
    # Every card read with confidence is right; a card read without it is marked so (a claim
    # naming it, or a "no SET" call, then waits for a better view).
    confident = [s.card for s in referee.table if s.is_readable]
    assert set(confident) <= set(final) and (reader == "recognizer" or len(confident) == 12), referee.table_text()


def test_a_black_and_white_photo_is_refereed_with_a_note_that_no_colour_shows(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import cv2
    import numpy as np

    from setfinder.commands.referee import PhotoSource

    class Reads:
        def read_board(self, image: np.ndarray, scale: float = 1.0) -> Board:
            return Board(cards=(), width=image.shape[1], height=image.shape[0])

    folder = tmp_path / "photos"
    folder.mkdir()
    colour = np.zeros((120, 160, 3), np.uint8)
    colour[40:80, 60:100] = (40, 40, 200)
    cv2.imwrite(str(folder / "1-colour.png"), colour)
    cv2.imwrite(str(folder / "2-grey.png"), cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY))
    views = PhotoSource(folder, Reads())
    assert views.next_view() is not None and capsys.readouterr().err == ""
    assert views.next_view() is not None
    assert capsys.readouterr().err.startswith("2-grey.png is black and white: no card's colour can be read")
