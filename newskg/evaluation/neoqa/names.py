"""Fictional names for the 8 entity classes, built from syllables and checked against a blocklist of real names
(NeoQA step 5 checks Wikipedia; offline we check `data/real_names.txt`). A name is never reused in a timeline."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from newskg.evaluation.neoqa import vocab

BLOCKLIST = Path(__file__).parent / "data" / "real_names.txt"
MAX_TRIES = 200


@lru_cache(maxsize=1)
def real_names() -> tuple[re.Pattern[str], ...]:
    lines = BLOCKLIST.read_text(encoding="utf-8").splitlines()
    return tuple(
        re.compile(rf"(?<!\w){re.escape(line.strip())}(?!\w)", re.I)
        for line in lines
        if line.strip() and not line.startswith("#")
    )


def is_real(name: str) -> bool:
    """True when the name is, or contains as whole words, a real-world name on the blocklist."""
    return any(pattern.search(name) for pattern in real_names())


class NameMaker:
    def __init__(self, rng: random.Random, genre_id: str):
        self.rng = rng
        self.genre_id = genre_id
        self.used: set[str] = set()
        self.country = self._stem() + self.rng.choice(["ia", "a", "or", "ene"])
        self.demonym = self.country.rstrip("aeor") + "ian"

    def _stem(self) -> str:
        return self.rng.choice(vocab.ONSETS) + self.rng.choice(vocab.MIDDLES)

    def _fresh(self, build: Callable[[], str]) -> str:
        for _ in range(MAX_TRIES):
            name = build()
            if name not in self.used and not is_real(name) and len(name.split()) <= 5:
                self.used.add(name)
                return name
        raise RuntimeError("no fresh fictional name after many tries; the syllable lists are too small")

    def person(self) -> str:
        return self._fresh(
            lambda: (
                f"{self._stem()}{self.rng.choice(vocab.GIVEN_ENDINGS)} "
                f"{self._stem().capitalize()}{self.rng.choice(vocab.FAMILY_ENDINGS)}"
            )
        )

    def location(self) -> str:
        return self._fresh(lambda: self._stem() + self.rng.choice(vocab.PLACE_ENDINGS))

    def organization(self, place: str) -> str:
        return self._fresh(
            lambda: f"{self.rng.choice([place, self._stem() + 'an'])} {self.rng.choice(vocab.ORG_KINDS[self.genre_id])}"
        )

    def building(self, place: str) -> str:
        return self._fresh(
            lambda: f"{self.rng.choice([place, self._stem() + 'ton'])} {self.rng.choice(vocab.BUILDING_KINDS)}"
        )

    def event(self, place: str) -> str:
        return self._fresh(
            lambda: (
                f"{place} {self.rng.choice(['Spring', 'Autumn', 'Summer', 'Winter'])} "
                f"{self.rng.choice(vocab.EVENT_KINDS)}"
            )
        )

    def product(self) -> str:
        return self._fresh(
            lambda: (
                f"{self._stem()}{self.rng.choice(['x', 'ra', 'lo', 'na'])} "
                f"{self.rng.choice(['One', 'Pro', 'Mini', 'S2', 'Go'])}"
            )
        )

    def art(self) -> str:
        return self._fresh(lambda: f"{self.rng.choice(vocab.ART_NOUNS)} of {self.rng.choice(vocab.ART_ABSTRACTS)}")

    def miscellaneous(self) -> str:
        return self._fresh(
            lambda: (
                f"{self.rng.choice(vocab.MISC_WORDS)} {self.rng.choice(['Charter', 'Pledge', 'Campaign', 'Accord'])}"
            )
        )
