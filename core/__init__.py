"""The rules of SET (and 358), standard library only: no pixels here.

SET: `core.cards` (cards, `find_sets`, `explain`), `core.game` (the game engine), `core.board`
(what the camera saw, as rules data), `core.referee` (judging a real table), `core.odds`.
358 "Sargento mayor": `core.game358` (engine) and `core.strategy358` (computer players).
"""

from core.cards import (
    COLORS,
    COUNTS,
    FEATURES,
    SHADINGS,
    SHAPES,
    Card,
    CardParseError,
    easy_deck,
    explain,
    feature_verdicts,
    find_sets,
    full_deck,
    has_set,
    is_set,
    parse_cards,
    third_card,
)
from core.board import Board, SeenCard
from core.game import ClaimResult, Game, GameError, GameOptions, NoSetResult

__all__ = [
    "Board",
    "SeenCard",
    "COLORS",
    "COUNTS",
    "FEATURES",
    "SHADINGS",
    "SHAPES",
    "Card",
    "ClaimResult",
    "Game",
    "GameError",
    "GameOptions",
    "NoSetResult",
    "CardParseError",
    "easy_deck",
    "explain",
    "feature_verdicts",
    "find_sets",
    "full_deck",
    "has_set",
    "is_set",
    "parse_cards",
    "third_card",
]
