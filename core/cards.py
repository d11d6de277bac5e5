"""SET cards as small values, and the rules of what makes a SET.

A card is four base-3 digits, one per feature, packed into an int 0..80::

    index = 27 * count_digit + 9 * color_digit + 3 * shading_digit + shape_digit

so ``Card.from_index(0)`` is "1 red solid oval" and ``Card.from_index(80)`` is
"3 purple outline diamond". Three cards are a SET when every feature is all the same or all
different, which in digits is "the three digits sum to 0 modulo 3"; the card completing a pair
is therefore digit-wise ``(-a - b) % 3``.

>>> a = Card.parse("2 red striped ovals")
>>> b = Card.parse("1 green solid diamond")
>>> str(third_card(a, b))
'3 purple outline squiggle'
>>> is_set(a, b, third_card(a, b))
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

FEATURES: Final = ("count", "color", "shading", "shape")
COUNTS: Final = (1, 2, 3)
COLORS: Final = ("red", "green", "purple")
SHADINGS: Final = ("solid", "striped", "outline")
SHAPES: Final = ("oval", "squiggle", "diamond")

DECK_SIZE: Final = 81
_PLACE: Final = (27, 9, 3, 1)  # weight of each feature's digit in the index, in FEATURES order

# Every word the rule sheets use for a value (RULES.md "Cards"), mapped to (feature, digit).
# Plurals are derived below, so only singular forms are listed here.
_WORDS: Final[dict[str, tuple[int, int]]] = {
    "1": (0, 0), "one": (0, 0), "2": (0, 1), "two": (0, 1), "3": (0, 2), "three": (0, 2),
    "red": (1, 0), "green": (1, 1), "purple": (1, 2),
    "solid": (2, 0), "filled": (2, 0), "full": (2, 0),
    "striped": (2, 1), "stripe": (2, 1), "shaded": (2, 1), "lined": (2, 1),
    "outline": (2, 2), "outlined": (2, 2), "open": (2, 2), "empty": (2, 2), "contoured": (2, 2),
    "oval": (3, 0), "pill": (3, 0), "capsule": (3, 0), "stadium": (3, 0), "oblong": (3, 0),
    # The Japanese sheet calls the oval a "rectangle"; the deck has no other four-sided shape.
    "rectangle": (3, 0),
    "squiggle": (3, 1), "diamond": (3, 2),
}
_PLURALS: Final = {"stadia": "stadium"}
_TOKEN: Final = re.compile(r"[^\s,]+")


class CardParseError(ValueError):
    """Card text could not be read; ``word`` is the offending word (or "" when one is missing)."""

    def __init__(self, message: str, word: str = "") -> None:
        super().__init__(message)
        self.word = word


@dataclass(frozen=True, order=True)
class Card:
    """One SET card: an immutable, hashable, ordered value wrapping its index 0..80.

    Use the constructors (``from_index``, ``from_attributes``, ``parse``) rather than
    ``Card(index)`` directly; both work, the constructors return shared instances.
    """

    index: int

    def __post_init__(self) -> None:
        if not isinstance(self.index, int) or isinstance(self.index, bool) or not 0 <= self.index < DECK_SIZE:
            raise ValueError(f"card index must be an int in 0..80, got {self.index!r}")

    # -- constructors ---------------------------------------------------------------------------
    @staticmethod
    def from_index(index: int) -> Card:
        """The card with this index (0..80); raises ``ValueError`` outside that range."""
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < DECK_SIZE:
            raise ValueError(f"card index must be an int in 0..80, got {index!r}")
        return _ALL_CARDS[index]

    @staticmethod
    def from_digits(digits: Sequence[int]) -> Card:
        """The card with these four feature digits (each 0..2), in FEATURES order."""
        if len(digits) != 4 or any(d not in (0, 1, 2) for d in digits):
            raise ValueError(f"card digits must be four values in 0..2, got {tuple(digits)!r}")
        return _ALL_CARDS[sum(d * p for d, p in zip(digits, _PLACE))]

    @staticmethod
    def from_attributes(*, count: int, color: str, shading: str, shape: str) -> Card:
        """The card with these canonical values, e.g. ``count=2, color="red", shading="striped",
        shape="oval"``; raises ``ValueError`` naming the bad value."""
        for name, value, allowed in (("count", count, COUNTS), ("color", color, COLORS),
                                     ("shading", shading, SHADINGS), ("shape", shape, SHAPES)):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(map(str, allowed))}; got {value!r}")
        return Card.from_digits((COUNTS.index(count), COLORS.index(color),
                                 SHADINGS.index(shading), SHAPES.index(shape)))

    @staticmethod
    def parse(text: str) -> Card:
        """Read a card from words such as "2 red striped oval" or "two green empty pills".

        Words may come in any order, are case-insensitive, may be plural, and may be any synonym
        from RULES.md (pill/capsule/oblong/stadium, empty/open, shaded/lined, filled ...). Each of
        the four features must be named exactly once.

        :raises CardParseError: naming the unknown word, the feature named twice, or the one missing.
        """
        if not isinstance(text, str):
            raise CardParseError(f"card text must be a string, got {type(text).__name__}")
        digits: list[int | None] = [None, None, None, None]
        words: list[str | None] = [None, None, None, None]
        for word in _TOKEN.findall(text):
            feature, digit = _read_word(word)
            if digits[feature] is not None:
                raise CardParseError(
                    f"{FEATURES[feature]} given twice in {text.strip()!r}: {words[feature]!r} and {word!r}",
                    word)
            digits[feature], words[feature] = digit, word
        missing = [FEATURES[f] for f in range(4) if digits[f] is None]
        if missing:
            raise CardParseError(
                f"card {text.strip()!r} does not say its {' or '.join(missing)}"
                " (expected e.g. '2 red striped oval')")
        return Card.from_digits([d for d in digits if d is not None])

    # -- features -------------------------------------------------------------------------------
    @property
    def digits(self) -> tuple[int, int, int, int]:
        """The four feature digits (count, color, shading, shape), each 0..2."""
        return _DIGITS[self.index]

    @property
    def count(self) -> int:
        return COUNTS[self.digits[0]]

    @property
    def color(self) -> str:
        return COLORS[self.digits[1]]

    @property
    def shading(self) -> str:
        return SHADINGS[self.digits[2]]

    @property
    def shape(self) -> str:
        return SHAPES[self.digits[3]]

    def value(self, feature: str) -> int | str:
        """The value of one feature by name: ``card.value("color") == "red"``."""
        if feature not in FEATURES:
            raise ValueError(f"feature must be one of {', '.join(FEATURES)}; got {feature!r}")
        return _feature_value(FEATURES.index(feature), self.digits[FEATURES.index(feature)])

    def __str__(self) -> str:
        return f"{self.count} {self.color} {self.shading} {self.shape}"

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"


def _read_word(word: str) -> tuple[int, int]:
    key = word.lower().strip(".;:!?\"'()")
    if key in _WORDS:
        return _WORDS[key]
    if key in _PLURALS:
        return _WORDS[_PLURALS[key]]
    for suffix in ("es", "s"):
        if key.endswith(suffix) and key[: -len(suffix)] in _WORDS and not key[: -len(suffix)].isdigit():
            return _WORDS[key[: -len(suffix)]]
    raise CardParseError(f"unknown word {word!r} in card text (expected e.g. '2 red striped oval')", word)


def _feature_value(feature: int, digit: int) -> int | str:
    values: tuple[int | str, ...] = (COUNTS, COLORS, SHADINGS, SHAPES)[feature]
    return values[digit]


_DIGITS: Final[tuple[tuple[int, int, int, int], ...]] = tuple(
    (i // 27, i // 9 % 3, i // 3 % 3, i % 3) for i in range(DECK_SIZE))
_ALL_CARDS: Final[tuple[Card, ...]] = tuple(Card(i) for i in range(DECK_SIZE))
# _THIRD[a][b] is the index of the card completing a SET with cards a and b.
_THIRD: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(sum(((-da - db) % 3) * p for da, db, p in zip(_DIGITS[a], _DIGITS[b], _PLACE))
          for b in range(DECK_SIZE))
    for a in range(DECK_SIZE))


def parse_cards(text: str) -> list[Card]:
    """Read several cards separated by ";" or new lines: "2 red striped oval; 1 green solid diamond".

    :raises CardParseError: for the first card that cannot be read, saying which one (1-based).
    """
    parts = [part.strip() for part in re.split(r"[;\n]", text)]
    cards: list[Card] = []
    for number, part in enumerate((p for p in parts if p), 1):
        try:
            cards.append(Card.parse(part))
        except CardParseError as error:
            raise CardParseError(f"card {number}: {error}", error.word) from None
    return cards


def full_deck() -> list[Card]:
    """All 81 cards in index order (a new list each call; shuffle it freely)."""
    return list(_ALL_CARDS)


def easy_deck() -> list[Card]:
    """The 27 solid cards of the beginners' deck (RULES.md "Easy start"), in index order."""
    return [card for card in _ALL_CARDS if card.digits[2] == 0]


def is_set(a: Card, b: Card, c: Card) -> bool:
    """True when, feature by feature, the three cards are all the same or all different."""
    return _THIRD[a.index][b.index] == c.index


def third_card(a: Card, b: Card) -> Card:
    """The unique card that makes a SET with ``a`` and ``b`` (``a`` itself when ``a == b``)."""
    return _ALL_CARDS[_THIRD[a.index][b.index]]


def find_sets(cards: Sequence[Card]) -> list[tuple[int, int, int]]:
    """Every SET among ``cards``, as sorted 0-based index triples ``(i, j, k)``, ``i < j < k``.

    O(n^2): for each pair the completing card is looked up in a table of positions, instead of
    testing all n^3/6 triples. Repeated cards are allowed (three equal cards count as a SET,
    since every feature is "all the same"), each position being used as its own card.
    """
    indices = [card.index for card in cards]
    # where[card index] = its position; a flat list lookup is the cheapest step Python has.
    where = [-1] * DECK_SIZE
    for position, index in enumerate(indices):
        if where[index] >= 0:
            return _find_sets_with_repeats(indices)
        where[index] = position
    n = len(indices)
    found: list[tuple[int, int, int]] = []
    append = found.append
    for i in range(n - 2):  # the third card must lie after j, so i < n - 2 and j < n - 1
        row = _THIRD[indices[i]]
        for j in range(i + 1, n - 1):
            k = where[row[indices[j]]]
            if k > j:
                append((i, j, k))
    return found


def _find_sets_with_repeats(indices: list[int]) -> list[tuple[int, int, int]]:
    """`find_sets` for boards on which a card appears more than once (all positions kept)."""
    positions: dict[int, list[int]] = {}
    for position, index in enumerate(indices):
        positions.setdefault(index, []).append(position)
    found: list[tuple[int, int, int]] = []
    for i, a in enumerate(indices):
        row = _THIRD[a]
        for j in range(i + 1, len(indices)):
            found.extend((i, j, k) for k in positions.get(row[indices[j]], ()) if k > j)
    return found


def has_set(cards: Sequence[Card]) -> bool:
    """True when ``cards`` hold at least one SET; stops at the first one found."""
    indices = [card.index for card in cards]
    last_position = {index: position for position, index in enumerate(indices)}
    for i, a in enumerate(indices):
        row = _THIRD[a]
        for j in range(i + 1, len(indices)):
            k = last_position.get(row[indices[j]])
            if k is not None and k > j:
                return True
    return False


def feature_verdicts(a: Card, b: Card, c: Card) -> list[tuple[str, bool, str]]:
    """For each feature: (feature name, whether it obeys the rule, plain words about it).

    The words read "all red", "all different (1, 2, 3)", "two red, one purple" or, for counts,
    "two with 2, one with 3".
    """
    verdicts: list[tuple[str, bool, str]] = []
    for f, name in enumerate(FEATURES):
        values = [_feature_value(f, card.digits[f]) for card in (a, b, c)]
        distinct = sorted(set(values), key=values.index)
        if len(distinct) == 1:
            words = f"all {distinct[0]}"
        elif len(distinct) == 3:
            words = "all different (" + ", ".join(map(str, values)) + ")"
        else:
            pair = next(v for v in distinct if values.count(v) == 2)
            odd = next(v for v in distinct if values.count(v) == 1)
            with_ = "with " if f == 0 else ""  # "two with 2, one with 3" for counts
            words = f"two {with_}{pair}, one {with_}{odd}"
        verdicts.append((name, len(distinct) != 2, words))
    return verdicts


def explain(a: Card, b: Card, c: Card) -> str:
    """Why three cards are, or are not, a SET, feature by feature, in plain words.

    >>> print(explain(Card.parse("2 red solid oval"), Card.parse("2 red solid squiggle"),
    ...               Card.parse("2 purple solid diamond")))
    Not a SET: color: two red, one purple. (fine: count: all 2; shading: all solid; shape: all different (oval, squiggle, diamond))
    """
    verdicts = feature_verdicts(a, b, c)
    broken = [f"{name}: {words}" for name, ok, words in verdicts if not ok]
    fine = [f"{name}: {words}" for name, ok, words in verdicts if ok]
    if not broken:
        return "SET: " + "; ".join(fine) + "."
    text = "Not a SET: " + "; ".join(broken) + "."
    if fine:
        text += " (fine: " + "; ".join(fine) + ")"
    return text


def cards_text(cards: Iterable[Card]) -> str:
    """Cards as one line, "; "-separated: the form ``parse_cards`` reads back."""
    return "; ".join(str(card) for card in cards)
