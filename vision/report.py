"""Boards as text and JSON: the one serialiser that `find --json`, live `--jsonl` and the
referee share, so every mode speaks the same schema."""

from __future__ import annotations

from typing import Any

from core.board import Board


def board_to_json(board: Board) -> dict[str, Any]:
    """The board part of the `setfinder find --json` schema.

    ``{"width", "height", "cards": [{"id", "count", "color", "shading", "shape", "corners",
    "confidence", "partial", "uncertain"}], "sets": [[id, id, id], ...], "verdict"}`` with
    1-based ids in reading order and corners as [[x, y] x4] image pixels.
    """
    return {
        "width": board.width,
        "height": board.height,
        "cards": [
            {
                "id": index + 1,
                "count": seen.card.count,
                "color": seen.card.color,
                "shading": seen.card.shading,
                "shape": seen.card.shape,
                "corners": [[round(x, 1), round(y, 1)] for x, y in seen.corners],
                "confidence": round(seen.confidence, 4),
                "partial": seen.partial,
                "uncertain": seen.uncertain,
            }
            for index, seen in enumerate(board.cards)
        ],
        "sets": [[i + 1 for i in triple] for triple in board.sets()],
        "verdict": board.verdict,
    }


def verdict_text(board: Board) -> str:
    """One line a person reads: the SETs found, "no SET: deal three more", or why unsure."""
    sets = board.sets()
    certain = board.certain_sets()
    doubtful = [i + 1 for i, seen in enumerate(board.cards) if seen.uncertain and not seen.partial]
    cut = [i + 1 for i, seen in enumerate(board.cards) if seen.partial]
    if board.verdict == "sets":
        text = f"{len(certain)} SET{'s' if len(certain) != 1 else ''}: " + " ".join(
            "(" + " ".join(str(i + 1) for i in triple) + ")" for triple in certain)
        if len(sets) > len(certain):
            text += f" (+{len(sets) - len(certain)} involving uncertain cards)"
        return text
    if board.verdict == "no-set":
        return f"No SET among {len(board.cards)} cards: deal three more"
    if not board.cards:
        return "No cards found"
    reasons = []
    if doubtful:
        reasons.append(f"card{'s' if len(doubtful) > 1 else ''} {', '.join(map(str, doubtful))} "
                       "read with low confidence")
    if cut:
        reasons.append(f"card{'s' if len(cut) > 1 else ''} {', '.join(map(str, cut))} cut by the frame")
    found = f"{len(sets)} possible SET{'s' if len(sets) != 1 else ''}" if sets else "no SET seen"
    return f"Uncertain ({found}): {'; '.join(reasons)}. Take a clearer, whole view"


def board_table(board: Board) -> str:
    """A fixed-width table of the cards: position, reading, confidence, flags."""
    lines = [f"{'#':>3}  {'card':<26} {'conf':>5}  note"]
    for index, seen in enumerate(board.cards):
        note = "partial" if seen.partial else ("uncertain" if seen.uncertain else "")
        lines.append(f"{index + 1:>3}  {str(seen.card):<26} {seen.confidence:5.2f}  {note}".rstrip())
    return "\n".join(lines)
