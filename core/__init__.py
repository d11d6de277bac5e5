"""The rules of SET (and 358), standard library only: no pixels here."""

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
    find_sets,
    full_deck,
    has_set,
    is_set,
    parse_cards,
    third_card,
)
from core.game import ClaimResult, Game, GameError, GameOptions, NoSetResult

__all__ = [
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
    "find_sets",
    "full_deck",
    "has_set",
    "is_set",
    "parse_cards",
    "third_card",
]
