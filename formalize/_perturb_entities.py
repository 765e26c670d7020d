"""CheckList-style entity perturbations: swap a name or a location for another from a
lexicon, or change a number a little. Seeded by the ``rng`` passed in, like every
perturbation; each returns None when the text has nothing to change."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence


class _SwapEntity:
    """Replace one entity of the text (a lexicon value, as a whole word, every occurrence)
    by another value of the same lexicon, both drawn by the ``rng``.

    Args:
        phrases: the entities (or ``lexicon: NAME`` in the suite; default: the class's).
    """

    default_lexicon: str | None = None

    def __init__(self, *, phrases: Sequence[str] = ()) -> None:
        values = list(dict.fromkeys(p.strip() for p in phrases if isinstance(p, str)
                                    and p.strip()))
        if len(values) < 2:
            raise ValueError("'phrases' (or 'lexicon') must give at least two entities to swap")
        self.values = values
        by_length = sorted(values, key=len, reverse=True)
        self._pattern = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, by_length)) + r")(?!\w)")

    def __call__(self, text: str, rng: random.Random) -> str | None:
        found = list(dict.fromkeys(m.group(1) for m in self._pattern.finditer(text)))
        if not found:
            return None
        old = rng.choice(found)
        new = rng.choice([v for v in self.values if v != old])
        return re.sub(r"(?<!\w)" + re.escape(old) + r"(?!\w)", lambda _m: new, text)


class ChangeName(_SwapEntity):
    """Swap a first name for another (lexicon FIRST_NAME by default)."""

    default_lexicon = "FIRST_NAME"


class ChangeLocation(_SwapEntity):
    """Swap a location for another (lexicon CITY by default; ``lexicon: COUNTRY`` for
    countries)."""

    default_lexicon = "CITY"


_NUMBER = re.compile(r"(?<![\w.,])\d+(?![\w]|[.,]\d)")


class ChangeNumber:
    """Change one whole number of the text (not a part of a decimal or of a word) to another
    within ``spread`` of it (CheckList's ``change_number``: times a factor drawn from
    ``[1 - spread, 1 + spread]``), never to itself and never below 0.

    Args:
        spread: the largest relative change, in (0, 1].
    """

    def __init__(self, *, spread: float = 0.2) -> None:
        if (not isinstance(spread, int | float) or isinstance(spread, bool)
                or not 0 < spread <= 1):
            raise ValueError(f"'spread' must be a number in (0, 1]; got {spread!r}")
        self.spread = float(spread)

    def __call__(self, text: str, rng: random.Random) -> str | None:
        matches = list(_NUMBER.finditer(text))
        if not matches:
            return None
        m = rng.choice(matches)
        n = int(m.group(0))
        new = max(0, round(n * rng.uniform(1 - self.spread, 1 + self.spread)))
        if new == n:
            new = n + 1 if rng.random() < 0.5 or n == 0 else n - 1
        return f"{text[:m.start()]}{new}{text[m.end():]}"
