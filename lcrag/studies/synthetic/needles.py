"""lcrag's own two-hop needles for the synthetic benchmark (EBG paper §4.1, App. B genre).

Each needle is two atomic facts, a question that needs both, and the accepted answers
(compared exactly, case-sensitively after stripping '.', data README §6.1). ``facts[0]`` is
the **first hop** (it names the question's anchor entity) and ``facts[1]`` the **second
hop** (reached only through the bridge entity that the first fact introduces); for needles
written elsewhere (the paper's), :func:`lcrag.studies.synthetic.data.hop_order` finds the order by
rule. Names are drawn from the same distributions as the distractor pool's
(``lcrag.studies.synthetic.vocab``) and every relation phrase is one the pool's templates use
in thousands of distractors, so only the names single a needle out.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TwoHopNeedle:
    """A two-hop needle: two atomic facts, a question needing both, accepted answers."""

    id: str
    facts: tuple[str, str]
    question: str
    answers: tuple[str, ...]
    source: str = "lcrag"


def _n(i: int, f1: str, f2: str, q: str, *answers: str) -> TwoHopNeedle:
    return TwoHopNeedle(f"lc{i:02d}", (f1, f2), q, tuple(answers))


LCRAG_NEEDLES: tuple[TwoHopNeedle, ...] = (
    # person -> org (role) -> age
    _n(1, "Rosa Nakamura is the CEO of Brightforge Robotics.", "Rosa Nakamura is 58 years old.",
       "How old is the CEO of Brightforge Robotics?", "58", "58 years old"),
    # org -> founder -> birthplace
    _n(2, "Vectorflow Analytics was founded by Omar Petrov in 2009.", "Omar Petrov was born in Tbilisi.",
       "Where was the founder of Vectorflow Analytics born?", "Tbilisi"),
    # product -> maker -> HQ
    _n(3, "Lumencast is a smart speaker made by Orbitgate Systems.", "Orbitgate Systems is headquartered in Gothenburg.",
       "In which city is the maker of Lumencast headquartered?", "Gothenburg"),
    # person -> employer -> HQ
    _n(4, "Kenji Morris works at Tidecraft Logistics.", "Tidecraft Logistics is headquartered in Rotterdam.",
       "In which city is the company that Kenji Morris works at headquartered?", "Rotterdam"),
    # org team -> manager -> university
    _n(5, "Leah Fischer manages the design team at Sparkline Media.",
       "Leah Fischer studied architecture at the University of Bologna.",
       "Where did the manager of the design team at Sparkline Media study?",
       "University of Bologna", "the University of Bologna", "Bologna"),
    # acquired org -> acquirer -> CEO
    _n(6, "Keystonegrid Energy was acquired by Polarbridge Capital in 2019.", "Hassan Ortiz is the CEO of Polarbridge Capital.",
       "Who is the CEO of the company that acquired Keystonegrid Energy?", "Hassan Ortiz"),
    # owner -> venue -> city
    _n(7, "Irene Kowalski owns a Peruvian restaurant called Saffron.", "Saffron is located in Valencia.",
       "In which city is the restaurant owned by Irene Kowalski located?", "Valencia"),
    # org -> founder -> moved to
    _n(8, "Daniel Hansen founded Nexapath Software.", "Daniel Hansen moved to Lisbon in 2016.",
       "Which city did the founder of Nexapath Software move to?", "Lisbon"),
    # city -> org -> product (anchor on the place, as the paper's Himalaya needle)
    _n(9, "Quantumleaf Biotech is based in Nairobi.", "Quantumleaf Biotech developed an antiviral drug called Vitalcore.",
       "Which antiviral drug was developed by a company based in Nairobi?", "Vitalcore"),
    # parent -> child -> birth year
    _n(10, "Lucas Moreno is the only son of Priya Banerjee.", "Lucas Moreno was born in 1994.",
       "In which year was Priya Banerjee's son born?", "1994"),
    # owner -> pet -> age
    _n(11, "Julia Becker owns a greyhound named Sirocco.", "Sirocco is 11 years old.",
       "How old is Julia Becker's greyhound?", "11", "11 years old"),
    # founder -> org -> specialty
    _n(12, "Mina Costa is the founder of Crestmatrix Labs.", "Crestmatrix Labs specializes in medical imaging.",
       "What does Mina Costa's company specialize in?", "medical imaging", "Medical imaging"),
    # product -> developer -> founder
    _n(13, "Echoleaf is an e-reader developed by Swiftstack Technologies.",
       "Swiftstack Technologies was founded by Grace Yilmaz.",
       "Who founded the company that developed Echoleaf?", "Grace Yilmaz"),
    # org -> CFO -> residence
    _n(14, "Ravi Schneider is the CFO of Goldtrail Airlines.", "Ravi Schneider lives in Calgary.",
       "Where does the CFO of Goldtrail Airlines live?", "Calgary"),
    # venue -> manager -> university
    _n(15, "Sofia Turner manages the Belvedere hotel.", "Sofia Turner studied law at the University of Graz.",
       "At which university did the manager of the Belvedere hotel study?",
       "University of Graz", "the University of Graz", "Graz"),
    # acquirer -> acquired org -> HQ
    _n(16, "Helioscope Media acquired Redtide Games in 2021.", "Redtide Games is based in Tampere.",
       "Where is the company acquired by Helioscope Media based?", "Tampere"),
    # person -> employer -> specialty
    _n(17, "Isaac Nguyen works as a lead engineer at Verdeflux Energy.", "Verdeflux Energy specializes in battery storage.",
       "What does the company where Isaac Nguyen works specialize in?", "battery storage", "Battery storage"),
    # co-founder -> org -> founding year
    _n(18, "Chloe Ramirez co-founded Pixelridge Studios.", "Pixelridge Studios was founded in 2011.",
       "In which year was the company co-founded by Chloe Ramirez founded?", "2011"),
    # city -> org -> CEO
    _n(19, "Sagehub Foods is headquartered in Quito.", "Naomi Weber is the CEO of Sagehub Foods.",
       "Who is the CEO of the company headquartered in Quito?", "Naomi Weber"),
    # CTO -> org -> product
    _n(20, "Yusuf Tanaka is the CTO of Clearscale Robotics.", "Clearscale Robotics launched a home robot called Sparkmind.",
       "Which home robot was launched by the company whose CTO is Yusuf Tanaka?", "Sparkmind"),
    # sibling -> sibling -> employer
    _n(21, "Elena Rossi is the sister of Arjun Mehta.", "Arjun Mehta works at Terragate Pharmaceuticals.",
       "Which company does Elena Rossi's brother work at?", "Terragate Pharmaceuticals", "Terragate"),
    # venue -> owner -> birthplace
    _n(22, "The Marigold bakery is owned by Felipe Schmidt.", "Felipe Schmidt was born in Bergen.",
       "Where was the owner of the Marigold bakery born?", "Bergen"),
    # university -> graduate -> employer
    _n(23, "Aisha Carter studied computer science at the University of Dhaka.",
       "Aisha Carter manages the security team at Orbitline Networks.",
       "Which company's security team is managed by a graduate of the University of Dhaka?",
       "Orbitline Networks", "Orbitline"),
    # product -> maker -> acquirer
    _n(24, "Northstream is a fitness tracker made by Vistacraft Inc.", "Vistacraft Inc. was acquired by Atlasforge Group in 2018.",
       "Which company acquired the maker of Northstream?", "Atlasforge Group", "Atlasforge"),
    # head of research -> org -> HQ
    _n(25, "Tom Silva is the head of research at Jadecore Biotech.", "Jadecore Biotech is headquartered in Basel.",
       "Where is the company whose head of research is Tom Silva headquartered?", "Basel"),
    # founder -> birth city, anchored on a person's child
    _n(26, "Carla Jensen is the only daughter of Wei Hughes.", "Carla Jensen moved to Osaka in 2012.",
       "Which city did Wei Hughes's daughter move to?", "Osaka"),
)

# Names in the paper's 10 needles (LC-EBG ``TWO_HOP_EXAMPLES``), reserved so the generated pool
# never uses them even when the data directory is absent; a data test checks the list is complete.
PAPER_NEEDLE_NAMES: tuple[str, ...] = (
    "Pedro Oliver", "Coloma Inc.", "Carol Smith", "Diagonal Labs", "Berlin", "Sam Jacobs", "Helen Kim", "Chevalier",
    "Antibes", "Martin Wong", "SkyCloud", "Little Sky Software", "Cayuga", "James Lee", "Horizon Tech", "Anna Garcia",
    "Madrid", "Vertex Solutions", "NovaTech", "NovaMind", "New York", "Himalaya Inc.", "FitBand", "Mumbai",
    "Victor Alvarez", "Zenith Pharmaceuticals", "Z-Vax",
)
