"""Read canonical cards: count, color, shading and shape, each with a confidence.

The models are plain arrays in ``models/card_reader.json`` (written by ``setfinder train``):
per attribute the names of the features it uses, a standardisation (mean, scale), optionally a
hidden layer of ReLUs (hidden_coef, hidden_intercept) and a softmax layer (coef, intercept): a
multinomial logistic regression or a one-hidden-layer network, evaluated here with NumPy alone,
so loading needs no scikit-learn and no unpickling.
A reading whose confidence (the winning class probability) is below the attribute's calibrated
threshold is marked uncertain: it is still the best guess, but must not be trusted for a call.
So is one whose features lie far from every training card of the class it was read as
(``familiar``: a sample of them and a radius, where the model has them), since there the
classifier's probability is an extrapolation: a striped card blurred across its stripes by a
shaking camera is read solid at 0.98, its features unlike any solid card trained on. And so is
a striped reading whose symbols hold strong, even ink inside, as a solid fill under glare does
(`_evenly_filled_striped`).

Example::

    reader = CardReader.load()
    reading = reader.read([resize_crop(cv2.imread("card.jpg"))])[0]
    print(reading.card, reading.confidence, reading.uncertain)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from core.cards import Card
from vision.features import FEATURE_NAMES, check_canonical, features_and_ink_checks, without_shadow

MODEL_FORMAT = "setfinder-card-reader/3"
DEFAULT_MODEL_PATH = Path(__file__).resolve().parents[1] / "models" / "card_reader.json"
ATTRIBUTES = ("count", "color", "shading", "shape")


_HUE_COS, _HUE_SIN = FEATURE_NAMES.index("hue_cos"), FEATURE_NAMES.index("hue_sin")


class ModelError(ValueError):
    """The model file is missing, unreadable or does not match this version of the reader."""


@dataclass(frozen=True)
class CardReading:
    """What the reader saw on one card.

    ``attribute_confidence`` maps "count", "color", "shading", "shape" to the probability of the
    value read, in [0, 1]; ``confidence`` is the lowest of them; ``uncertain`` is True when any
    attribute is below its threshold; ``sideways`` is True when the card's ink blobs say it was
    warped a quarter turn off (`vision.features.looks_sideways`), so that it is worth re-reading
    turned; ``blank`` is True when no printed symbol could be seen on it at all
    (`vision.features.shows_symbols`): the values are then a guess, and ``uncertain`` is True;
    ``not_as_printed`` is True when its symbols sit off the card's middle, differ in size from
    each other or are stretched along the card, as no SET card prints them
    (`vision.features.symbols_off_centre`, `vision.features.symbols_unlike_each_other`,
    `vision.features.symbols_stretched`: the outline is not the card's), and then
    ``uncertain`` is True too; ``shadowed`` is True when its symbols could only be told from a
    shadow's edge across it (`vision.features.shows_symbols_under_shadow`): the reading is then
    that of the card relit evenly (`vision.features.without_shadow`), and where the symbols do
    not show plainly even relit, ``uncertain`` is True. ``ink_hue`` is the hue of the card's
    strongest ink, white-balanced by its paper, in degrees (the ``hue_cos`` and ``hue_sin``
    features): the cards of one board read the same colour lie close together in it.
    """

    card: Card
    attribute_confidence: dict[str, float] = field(compare=False)
    confidence: float
    uncertain: bool
    sideways: bool = field(default=False, compare=False)
    blank: bool = field(default=False, compare=False)
    not_as_printed: bool = field(default=False, compare=False)
    shadowed: bool = field(default=False, compare=False)
    unfamiliar: bool = field(default=False, compare=False)
    ink_hue: float = field(default=float("nan"), compare=False)


def neighbour_distance(z: npt.NDArray[np.float64], prototypes: npt.NDArray[np.float64],
                       neighbour: int) -> npt.NDArray[np.float64]:
    """For each row of ``z`` (n, k), its Euclidean distance to its ``neighbour``-th nearest row of
    ``prototypes`` (m, k): (n,). The training code calibrates with this same function."""
    squared = (np.einsum("ij,ij->i", z, z)[:, None] + np.einsum("ij,ij->i", prototypes, prototypes)[None, :]
               - 2.0 * (z @ prototypes.T))
    kth = np.partition(squared, neighbour - 1, axis=1)[:, neighbour - 1]
    return np.sqrt(np.maximum(kth, 0.0))


@dataclass(frozen=True)
class _Familiar:
    """Where one attribute's training cards lie, per class: ``prototypes`` (a sample of that
    class's training cards, standardised as the classifier sees them) and ``radius``, the
    distance to the ``neighbour``-th nearest prototype within which 99.9% of the calibration
    cards of that class fall. A card read as a class and farther than that from its
    prototypes is unlike the cards the classifier learnt that class from."""

    prototypes: tuple[npt.NDArray[np.float64], ...]  # per class, (m, k)
    radius: npt.NDArray[np.float64]                  # (n_classes,)
    neighbour: int

    def unfamiliar(self, z: npt.NDArray[np.float64], chosen: npt.NDArray[np.intp]) -> npt.NDArray[np.bool_]:
        """For standardised features ``z`` (n, k) read as classes ``chosen`` (n,): (n,) bool."""
        far = np.zeros(len(z), dtype=bool)
        for index, prototypes in enumerate(self.prototypes):
            which = chosen == index
            if which.any():
                far[which] = neighbour_distance(z[which], prototypes, self.neighbour) > self.radius[index]
        return far


@dataclass(frozen=True)
class _AttributeModel:
    classes: tuple[str, ...]
    columns: npt.NDArray[np.intp]       # (k,) indices into FEATURE_NAMES
    mean: npt.NDArray[np.float64]       # (k,)
    scale: npt.NDArray[np.float64]      # (k,)
    coef: npt.NDArray[np.float64]       # (n_classes, k), or (n_classes, h) after a hidden layer
    intercept: npt.NDArray[np.float64]  # (n_classes,)
    threshold: float
    hidden_coef: npt.NDArray[np.float64] | None = None       # (h, k)
    hidden_intercept: npt.NDArray[np.float64] | None = None  # (h,)
    familiar: _Familiar | None = None

    def standardised(self, features: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """This attribute's columns of all features (n, N_FEATURES), standardised: (n, k)."""
        return (features[:, self.columns] - self.mean) / self.scale

    def probabilities(self, features: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Class probabilities float64 (n, n_classes) for all features (n, N_FEATURES)."""
        z = self.standardised(features)
        if self.hidden_coef is not None and self.hidden_intercept is not None:
            z = np.maximum(z @ self.hidden_coef.T + self.hidden_intercept, 0.0)
        logits = z @ self.coef.T + self.intercept
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=1, keepdims=True)


def _familiar_from(raw: dict[str, Any]) -> _Familiar:
    """The JSON form of a `_Familiar` (written by `vision.training.familiar_region`)."""
    neighbour = int(raw["neighbour"])
    if neighbour < 1:
        raise ValueError(f"neighbour {neighbour} < 1")
    return _Familiar(prototypes=tuple(np.asarray(p, dtype=np.float64) for p in raw["prototypes"]),
                     radius=np.asarray(raw["radius"], dtype=np.float64), neighbour=neighbour)


class CardReader:
    """Reads canonical cards with the models of one model file; load once, read many."""

    def __init__(self, models: dict[str, _AttributeModel]) -> None:
        self._models = models

    @classmethod
    def load(cls, path: str | Path | None = None) -> CardReader:
        """Load the reader from ``path`` (default ``models/card_reader.json`` in the repo).

        :raises ModelError: if the file is missing or not a card-reader model of this format.
        """
        path = Path(path) if path is not None else DEFAULT_MODEL_PATH
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise ModelError(f"card model {path} not found; rebuild it with `setfinder train`") from None
        except (OSError, json.JSONDecodeError) as error:
            raise ModelError(f"card model {path} is unreadable ({error}); rebuild it with `setfinder train`") from None
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "model") -> CardReader:
        """Build a reader from the JSON form written by `vision.training.save_model`."""
        if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT:
            raise ModelError(f"{source} is not a {MODEL_FORMAT} model; rebuild it with `setfinder train`")
        if list(data.get("features", [])) != list(FEATURE_NAMES):
            raise ModelError(f"{source} was trained on other features than this code computes; "
                             "rebuild it with `setfinder train`")
        models = {}
        for name in ATTRIBUTES:
            try:
                raw = data["attributes"][name]
                model = _AttributeModel(
                    classes=tuple(str(c) for c in raw["classes"]),
                    columns=np.array([FEATURE_NAMES.index(f) for f in raw["features"]], dtype=np.intp),
                    mean=np.asarray(raw["mean"], dtype=np.float64),
                    scale=np.asarray(raw["scale"], dtype=np.float64),
                    coef=np.asarray(raw["coef"], dtype=np.float64),
                    intercept=np.asarray(raw["intercept"], dtype=np.float64),
                    threshold=float(raw["threshold"]),
                    hidden_coef=np.asarray(raw["hidden_coef"], dtype=np.float64) if "hidden_coef" in raw else None,
                    hidden_intercept=(np.asarray(raw["hidden_intercept"], dtype=np.float64)
                                      if "hidden_coef" in raw else None),
                    familiar=_familiar_from(raw["familiar"]) if "familiar" in raw else None,
                )
            except (KeyError, TypeError, ValueError) as error:
                raise ModelError(f"{source}: attribute {name!r} is malformed ({error})") from None
            k, n = len(model.classes), len(model.columns)
            inner = n
            if model.hidden_coef is not None and model.hidden_intercept is not None:
                inner = model.hidden_coef.shape[0] if model.hidden_coef.ndim == 2 else -1
                if model.hidden_coef.shape != (inner, n) or model.hidden_intercept.shape != (inner,):
                    raise ModelError(f"{source}: attribute {name!r} hidden layer has the wrong shapes")
            if model.mean.shape != (n,) or model.scale.shape != (n,) or model.coef.shape != (k, inner) \
                    or model.intercept.shape != (k,):
                raise ModelError(f"{source}: attribute {name!r} arrays have the wrong shapes")
            familiar = model.familiar
            if familiar is not None and (len(familiar.prototypes) != k or familiar.radius.shape != (k,)
                                         or any(p.ndim != 2 or p.shape[1] != n or len(p) < familiar.neighbour
                                                for p in familiar.prototypes)):
                raise ModelError(f"{source}: attribute {name!r} familiar region has the wrong shapes")
            models[name] = model
        return cls(models)

    @property
    def thresholds(self) -> dict[str, float]:
        """The confidence below which each attribute's reading is uncertain."""
        return {name: model.threshold for name, model in self._models.items()}

    def probabilities(self, features: npt.NDArray[np.floating[Any]]) -> dict[str, npt.NDArray[np.float64]]:
        """Per attribute, class probabilities float64 (n, n_classes) for features (n, N_FEATURES)."""
        features = np.asarray(features, dtype=np.float64)
        if features.ndim != 2 or features.shape[1] != len(FEATURE_NAMES):
            raise ValueError(f"features must be (n, {len(FEATURE_NAMES)}), got {features.shape}")
        return {name: model.probabilities(features) for name, model in self._models.items()}

    def read(self, cards: list[npt.NDArray[np.uint8]]) -> list[CardReading]:
        """Read canonical cards (each BGR uint8 (250, 160, 3), e.g. from `warp_card`).

        Returns one CardReading per card, in order. An empty list gives an empty list.
        A card read uncertain is read a second time turned half round, and its values are those
        the two readings agree on best (their probabilities multiplied): the features are not
        quite the same either way up (`vision.features`), and of the cards
        found in five sets of generated scenes this reads 125 wrong where one reading read 138
        (`bench/HISTORY.md`, 2026-12-07 from 21:41). The reading stays uncertain: the thresholds
        were calibrated on one reading, so two are no surer a call, and which cards are flagged
        does not change.
        :raises ValueError: if a card is not a canonical array.
        """
        for card in cards:
            check_canonical(card)
        if not cards:
            return []
        features, sideways, blank, not_as_printed, shadowed, unreadable = _card_features(cards)
        readings = self.read_features(features, sideways, blank, not_as_printed, shadowed, unreadable)
        unsure = [i for i, reading in enumerate(readings) if reading.uncertain and not reading.blank]
        if not unsure:
            return readings
        turned = _card_features([np.ascontiguousarray(cards[i][::-1, ::-1]) for i in unsure])[0]
        both = self.probabilities(np.concatenate([features[unsure], turned]))
        agreed = {name: _agreed(p[:len(unsure)], p[len(unsure):]) for name, p in both.items()}
        second = self._readings(agreed, features[unsure], sideways[unsure], blank[unsure],
                                not_as_printed[unsure], shadowed[unsure], np.ones(len(unsure), dtype=bool))
        for i, reading in zip(unsure, second):
            readings[i] = reading
        return readings

    def read_features(self, features: npt.NDArray[np.floating[Any]],
                      sideways: npt.NDArray[np.bool_] | None = None,
                      blank: npt.NDArray[np.bool_] | None = None,
                      not_as_printed: npt.NDArray[np.bool_] | None = None,
                      shadowed: npt.NDArray[np.bool_] | None = None,
                      unreadable: npt.NDArray[np.bool_] | None = None) -> list[CardReading]:
        """Readings from precomputed features (n, N_FEATURES) and, optionally, the cards'
        sideways, blank, not-as-printed and shadowed flags (n,), as `read` would give; a card
        flagged ``unreadable`` (n,) is uncertain whatever its features say."""
        return self._readings(self.probabilities(features), features, sideways, blank, not_as_printed,
                              shadowed, unreadable)

    def _readings(self, probabilities: dict[str, npt.NDArray[np.float64]],
                  features: npt.NDArray[np.floating[Any]],
                  sideways: npt.NDArray[np.bool_] | None, blank: npt.NDArray[np.bool_] | None,
                  not_as_printed: npt.NDArray[np.bool_] | None, shadowed: npt.NDArray[np.bool_] | None,
                  unreadable: npt.NDArray[np.bool_] | None) -> list[CardReading]:
        """`read_features` from the class probabilities per attribute (n, n_classes) the
        features (n, N_FEATURES) were read as."""
        # Winning class and its probability per attribute, for all cards at once.
        best = {name: p.argmax(axis=1) for name, p in probabilities.items()}
        top = {name: p[np.arange(len(p)), best[name]].tolist() for name, p in probabilities.items()}
        chosen = {name: best[name].tolist() for name in best}
        as_float = np.asarray(features, dtype=np.float64)
        strange = np.zeros(len(features), dtype=bool)
        for name, model in self._models.items():
            if model.familiar is not None:
                strange |= model.familiar.unfamiliar(model.standardised(as_float), best[name])
        strange |= _evenly_filled_striped(as_float, best["shading"], self._models["shading"].classes)
        unfamiliar = strange.tolist()
        flags = [False] * len(features) if sideways is None else [bool(v) for v in sideways]
        blanks = [False] * len(features) if blank is None else [bool(v) for v in blank]
        unlike_print = [False] * len(features) if not_as_printed is None else [bool(v) for v in not_as_printed]
        shaded = [False] * len(features) if shadowed is None else [bool(v) for v in shadowed]
        guessed = [False] * len(features) if unreadable is None else [bool(v) for v in unreadable]
        hue = np.degrees(np.arctan2(as_float[:, _HUE_SIN], as_float[:, _HUE_COS])).tolist()
        readings = []
        for i in range(len(features)):
            values: dict[str, str] = {}
            confidence: dict[str, float] = {}
            uncertain = False
            for name, model in self._models.items():
                values[name] = model.classes[chosen[name][i]]
                confidence[name] = top[name][i]
                uncertain |= confidence[name] < model.threshold
            card = Card.from_attributes(count=int(values["count"]), color=values["color"],
                                        shading=values["shading"], shape=values["shape"])
            # A card showing no symbol gives features of nothing printed, one whose symbols
            # show under a shadow but not relit features of the shadow: whatever the
            # classifiers make of them, the reading is a guess.
            readings.append(CardReading(card, confidence, min(confidence.values()),
                                        uncertain or blanks[i] or unlike_print[i] or guessed[i] or unfamiliar[i],
                                        flags[i], blanks[i], unlike_print[i], shaded[i], unfamiliar[i], hue[i]))
        return readings


def _evenly_filled_striped(features: npt.NDArray[np.float64], shading: npt.NDArray[np.intp],
                           classes: tuple[str, ...]) -> npt.NDArray[np.bool_]:
    """For each card (features (n, N_FEATURES), shading class indices (n,) into ``classes``),
    whether it is read striped though the inside of its symbols holds half the card's strongest
    ink or more, evenly (no step between neighbouring pixels in one direction more than in
    another): a solid symbol whose fill looks pale, under a lamp's glare or in a paler print.

    Striped cards from real cameras hold little ink inside (the labelled crops: under 0.29 of
    the strongest in 99 of 100, 0.56 at most); in the generated scenes a striped card's stripes
    blurred into a tint reach 0.5 one time in a hundred. A glare-lit red solid squiggle of the
    webcam photos (`bench_robustness`'s "glare spot") was read striped at 0.99 with 0.5 or more;
    this flags it, and one of the four red solid symbols of "faded print" (bench/HISTORY.md,
    2026-12-08 from 02:07)."""
    if "striped" not in classes:
        return np.zeros(len(features), dtype=bool)
    return ((shading == classes.index("striped")) & (features[:, _INSIDE_INK] >= _EVEN_FILL_INK)
            & (features[:, _STEP_SPREAD] <= _EVEN_FILL_SPREAD))


_INSIDE_INK, _STEP_SPREAD = FEATURE_NAMES.index("inside_ink"), FEATURE_NAMES.index("inside_step_spread")
# Inside ink (a fraction of the card's strongest) at or over which, with steps spread no more
# than this (`vision.features`: ``inside_step_spread``), a striped reading is doubted.
_EVEN_FILL_INK = 0.5
_EVEN_FILL_SPREAD = 0.05


def _card_features(cards: list[npt.NDArray[np.uint8]]) -> tuple[
        npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_],
        npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """`vision.features.features_and_ink_checks` of canonical ``cards``, with the cards whose
    symbols show only under a shadow's edge read relit, plus per card whether it is unreadable
    (its symbols do not show plainly even relit)."""
    features, sideways, blank, not_as_printed, shadowed = features_and_ink_checks(cards)
    unreadable = np.zeros(len(cards), dtype=bool)
    if shadowed.any():
        # A shadow's edge hid the symbols from the ink segmentation, and the features are
        # the shadow's too: those cards are read relit.
        which = np.flatnonzero(shadowed)
        relit, relit_sideways, relit_blank, relit_not_as_printed, relit_shadowed = features_and_ink_checks(
            [without_shadow(cards[i]) for i in which])
        for k, i in enumerate(which):
            if relit_blank[k] or relit_shadowed[k]:
                unreadable[i] = True
            else:
                features[i], sideways[i], not_as_printed[i] = relit[k], relit_sideways[k], relit_not_as_printed[k]
    return features, sideways, blank, not_as_printed, shadowed, unreadable


def _agreed(first: npt.NDArray[np.float64], second: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Class probabilities (n, n_classes) two readings of the same cards agree on: their
    product, each row summing to one again (a geometric mean, so that a class one reading all
    but rules out stays unlikely)."""
    log_mean = (np.log(np.maximum(first, 1e-12)) + np.log(np.maximum(second, 1e-12))) / 2
    agreed = np.exp(log_mean - log_mean.max(axis=1, keepdims=True))
    return agreed / agreed.sum(axis=1, keepdims=True)
