"""Genre-matched distractor pool of the synthetic two-hop benchmark (EBG paper §4.1, App. B).

The paper's pool (66,834 model-written facts, not public) was made by prompting a model for
"random facts similar to the ones below ... slightly prefer facts about people and
organizations" and de-duplicating; its excerpt in App. B reads "Fitness startup VitalMotion
developed smart workout equipment.", "Director James Park released a documentary on
endangered rainforests.". Its needles use the same genre ("Pedro Oliver is the CEO of Coloma
Inc.", "NovaTech is based in New York.").

lcrag's pool reproduces that genre without a model: one-sentence facts about fictional
people, organisations, products, venues and places, written with the needles' relation
vocabulary (is the CEO of, works at, founded, was founded by, is headquartered in, is based
in, was born in, moved to, lives in, owns, manages, studied at, developed, launched,
acquired, specializes in, is N years old, is the only son of, …) in several surface forms per
relation, plus the paper's descriptor-led event facts. Names are drawn from the same
distributions as the needles' (:mod:`lcrag.studies.synthetic.vocab`) minus every name a needle
reserves, so relation words are shared by thousands of distractors and only a needle's names
single it out. Deterministic in ``seed``; facts are unique (exact string) and end with '.'.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from . import vocab as V

JOBS = ["engineer", "designer", "accountant", "data analyst", "lead engineer", "product manager", "chemist",
        "software developer", "sales director", "researcher", "architect", "lawyer", "nurse", "pilot", "chef"]
PETS = ["greyhound", "labrador", "beagle", "parrot", "tabby cat", "poodle", "horse", "terrier", "collie", "tortoise"]


def _a(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


class _Names:
    """Samplers over the shared distributions minus reserved names."""

    def __init__(self, rng: random.Random, reserved_words: frozenset[str], reserved_persons: frozenset[str]):
        self.rng = rng
        self.rw, self.rp = reserved_words, reserved_persons
        self.cities = [c for c in V.CITIES if c.lower() not in reserved_words]
        self.venues = [v for v in V.VENUE_NAMES if v.lower() not in reserved_words]
        self.first = [f for f in V.FIRST_NAMES if f.lower() not in reserved_words]
        self.last = [x for x in V.LAST_NAMES if x.lower() not in reserved_words]

        self.female = [f for f in self.first if f in V.FEMALE_FIRST]
        self.male = [f for f in self.first if f not in V.FEMALE_FIRST and f not in V.UNISEX_FIRST]

    def person(self, gender: str = "") -> str:
        firsts = self.female if gender == "f" else self.male if gender == "m" else self.first
        while True:
            p = f"{self.rng.choice(firsts)} {self.rng.choice(self.last)}"
            if p.lower() not in self.rp:
                return p

    def brand(self) -> str:
        while True:
            pre, suf = self.rng.choice(V.BRAND_PREFIXES), self.rng.choice(V.BRAND_SUFFIXES)
            b = pre + suf if self.rng.random() < 0.3 else pre + suf.lower()
            if b.lower() not in self.rw and pre.lower() != suf.lower():
                return b

    def org(self) -> str:
        return self.brand() if self.rng.random() < 0.15 else f"{self.brand()} {self.rng.choice(V.ORG_KINDS)}"

    def city(self) -> str:
        return self.rng.choice(self.cities)

    def venue(self) -> str:
        return self.rng.choice(self.venues)

    def year(self) -> int:
        return self.rng.randint(1950, 2024)

    def age(self) -> int:
        return self.rng.randint(19, 94)


def _templates(n: _Names) -> list:
    r = n.rng
    c = r.choice
    return [
        # roles
        lambda: f"{n.person()} is the {c(V.ROLES)} of {n.org()}.",
        lambda: f"{n.org()} appointed {n.person()} as {c(V.ROLES)} in {n.year()}.",
        lambda: f"{n.person()} was named {c(V.ROLES)} of {n.org()} in {n.year()}.",
        # ages
        lambda: f"{n.person()} is {n.age()} years old.",
        lambda: f"{n.person()} is {n.age()}.",
        lambda: f"{n.venue()} is {r.randint(2, 25)} years old.",
        # birth
        lambda: f"{n.person()} was born in {n.city()}.",
        lambda: f"{n.person()} was born in {n.year()}.",
        lambda: f"{n.person()} was born in {n.city()} in {n.year()}.",
        # founding
        lambda: f"{n.org()} was founded by {n.person()} in {n.year()}.",
        lambda: f"{n.org()} was founded by {n.person()}.",
        lambda: f"{n.person()} founded {n.org()}.",
        lambda: f"{n.person()} founded {n.org()} in {n.year()}.",
        lambda: f"{n.person()} is the founder of {n.org()}.",
        lambda: f"{n.person()} co-founded {n.org()}.",
        lambda: f"{n.person()} co-founded {n.org()} with {n.person()}.",
        lambda: f"{n.org()} was founded in {n.year()}.",
        lambda: f"{n.org()} was founded in {n.city()} in {n.year()}.",
        # headquarters
        lambda: f"{n.org()} is headquartered in {n.city()}.",
        lambda: f"{n.org()} is based in {n.city()}.",
        lambda: f"{n.org()} is based in the town of {n.city()}.",
        lambda: f"{n.org()} moved its headquarters to {n.city()} in {n.year()}.",
        # work
        lambda: f"{n.person()} works at {n.org()}.",
        lambda: f"{n.person()} works as {_a(c(JOBS))} at {n.org()}.",
        lambda: f"{n.person()} has worked at {n.org()} since {n.year()}.",
        lambda: f"{n.person()} works at the {n.city()} office of {n.org()}.",
        # management
        lambda: f"{n.person()} manages the {c(V.DEPARTMENTS)} team at {n.org()}.",
        lambda: f"{n.person()} manages the {n.venue()} {c(V.VENUE_KINDS)}.",
        lambda: f"{n.person()} manages the {n.city()} office of {n.org()}.",
        # study
        lambda: f"{n.person()} studied {c(V.SUBJECTS)} at the University of {n.city()}.",
        lambda: f"{n.person()} studied at the University of {n.city()}.",
        lambda: f"{n.person()} graduated from the University of {n.city()} in {n.year()}.",
        # moves and homes
        lambda: f"{n.person()} moved to {n.city()} in {n.year()}.",
        lambda: f"{n.person()} moved to {n.city()}.",
        lambda: f"{n.person()} lives in {n.city()}.",
        # ownership and venues
        lambda: f"{n.person()} owns {_a(c(V.CUISINES))} restaurant called {n.venue()}.",
        lambda: f"{n.person()} owns {_a(c(V.VENUE_KINDS))} in {n.city()}.",
        lambda: f"The {n.venue()} {c(V.VENUE_KINDS)} is owned by {n.person()}.",
        lambda: f"{n.venue()} is {_a(c(V.CUISINES))} restaurant in {n.city()}.",
        lambda: f"The {n.venue()} {c(V.VENUE_KINDS)} is located in {n.city()}.",
        lambda: f"{n.person()} owns {_a(c(PETS))} named {n.venue()}.",
        lambda: f"{n.person()} owns {n.org()}.",
        # products
        lambda: f"{n.org()} developed {_a(c(V.PRODUCT_CATEGORIES))} called {n.brand()}.",
        lambda: f"{n.org()} developed a new {c(V.PRODUCT_CATEGORIES)} named {n.brand()} in {n.year()}.",
        lambda: f"{n.org()} launched a new {c(V.PRODUCT_CATEGORIES)} called {n.brand()}.",
        lambda: f"{n.org()} launched {_a(c(V.PRODUCT_CATEGORIES))} called {n.brand()}.",
        lambda: f"{n.brand()} is {_a(c(V.PRODUCT_CATEGORIES))} made by {n.org()}.",
        lambda: f"{n.brand()} is {_a(c(V.PRODUCT_CATEGORIES))} developed by {n.org()}.",
        # acquisitions
        lambda: f"{n.org()} acquired {n.org()} in {n.year()}.",
        lambda: f"{n.org()} was acquired by {n.org()} in {n.year()}.",
        lambda: f"{n.org()} was acquired by {n.org()}.",
        # specialties
        lambda: f"{n.org()} specializes in {c(V.FIELDS)}.",
        lambda: f"{n.org()} is known for its work in {c(V.FIELDS)}.",
        # family
        lambda: f"{n.person('m')} is the only son of {n.person()}.",
        lambda: f"{n.person('f')} is the only daughter of {n.person()}.",
        lambda: f"{n.person('f')} is the sister of {n.person()}.",
        lambda: f"{n.person('m')} is the brother of {n.person()}.",
        lambda: f"{n.person()} is married to {n.person()}.",
        # the paper's descriptor-led events (App. B excerpt)
        lambda: f"{c(V.PERSON_DESCRIPTORS)} {n.person()} {c(V.EVENTS).format(topic=c(V.TOPICS))}.",
        lambda: f"{c(V.ORG_DESCRIPTORS)} {n.brand()} {c(V.ORG_EVENTS).format(topic=c(V.TOPICS))}.",
        lambda: f"A renowned {c(JOBS)} in {n.city()} {c(V.EVENTS).format(topic=c(V.TOPICS))}.",
        lambda: f"{n.org()} {c(V.ORG_EVENTS).format(topic=c(V.TOPICS))}.",
    ]


def generate_genre_pool(size: int, seed: int, *, reserved_words: Iterable[str] = (),
                        reserved_persons: Iterable[str] = ()) -> list[str]:
    """``size`` unique facts (module doc), deterministic in ``seed``; never uses a reserved name.

    ``reserved_words``: lowercased single-word names (organisation/product heads, cities,
    venues); ``reserved_persons``: lowercased full person names. Raises ``ValueError`` for a
    non-positive size or when the generator stops finding new facts.
    """
    if size <= 0:
        raise ValueError(f"pool size must be positive, got {size}")
    rng = random.Random(f"lcrag-synthetic-pool|{seed}")
    names = _Names(rng, frozenset(w.lower() for w in reserved_words), frozenset(p.lower() for p in reserved_persons))
    templates = _templates(names)
    seen: set[str] = set()
    out: list[str] = []
    misses = 0
    while len(out) < size:
        fact = rng.choice(templates)().replace("..", ".")  # "… Inc.." at a sentence end
        if fact in seen:
            misses += 1
            if misses > size:
                raise ValueError(f"cannot generate {size} unique facts (got {len(out)})")
            continue
        seen.add(fact)
        out.append(fact)
    return out


def template_count() -> int:
    """Number of sentence templates (for reports)."""
    return len(_templates(_Names(random.Random(0), frozenset(), frozenset())))


def relation_counts(pool: Sequence[str], phrases: Sequence[str]) -> dict[str, int]:
    """How many facts of ``pool`` contain each relation phrase (case-insensitive substring)."""
    low = [f.lower() for f in pool]
    return {p: sum(p.lower() in f for f in low) for p in phrases}
