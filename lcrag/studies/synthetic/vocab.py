"""Name and word distributions of lcrag's synthetic two-hop benchmark (EBG paper §4.1, App. B).

One set of distributions serves both the needles (``lcrag.studies.synthetic.needles``) and the
distractor pool (``lcrag.studies.synthetic.pool``), so a needle's names look like any
distractor's names: people are common first × last names from many languages (as the
paper's needles: Pedro Oliver, Carol Smith, Helen Kim, Anna Garcia); organisations are
brand-like compounds (NovaTech, Little Sky Software) with a kind suffix; products are
compound brand names (FitBand, SkyCloud); places are real cities and towns (Berlin, Mumbai,
Cayuga). The pool draws from these lists minus every name reserved by a needle
(:func:`lcrag.studies.synthetic.safety.reserved_names`).
"""

from __future__ import annotations

FIRST_NAMES = """Aaron Adam Adriana Ahmed Aisha Alan Alice Amara Amir Ana Andre Andrea Angela Anna Ari Arjun Beatriz
Ben Bianca Brian Camila Carla Carlos Carmen Carol Chen Chloe Chris Claire Daniel David Diana Diego Elena Eli Emily Emma
Eric Ethan Eva Farah Fatima Felipe Fiona Frank Gabriel Grace Hana Hannah Hassan Helen Henry Hiro Ian Ibrahim Irene Isaac
Ivan Jack Jacob James Jana Jason Javier Jin Joao John Jonas Jorge Julia Julian Karen Karim Kate Kenji Kevin Laila Lars
Laura Leah Leo Lily Lina Lucas Lucia Luis Maria Mark Marta Martin Maya Mei Michael Mina Mohammed Nadia Naomi Nathan Nina
Noah Olga Omar Oscar Paolo Paul Pedro Peter Priya Rachel Rafael Ravi Rosa Ryan Sam Sara Sean Sergio Sofia Sonia Stefan
Tara Thomas Tom Uma Victor Viktor Wei William Yara Yusuf Zara Zoe""".split()

# first names read as female (for "sister"/"daughter" facts); the rest of FIRST_NAMES serve "brother"/"son"
FEMALE_FIRST = frozenset("""Abigail Adriana Aisha Alice Amara Ana Andrea Angela Anna Beatriz Bianca Camila Carla Carmen Carol
Chloe Claire Diana Elena Emily Emma Eva Farah Fatima Fiona Grace Hana Hannah Helen Irene Jana Julia Karen Kate Laila Laura
Leah Lily Lina Lucia Maria Marta Maya Mei Mina Nadia Naomi Nina Olga Priya Rachel Rosa Sara Sofia Sonia Tara Uma Yara Zara
Zoe""".split())
UNISEX_FIRST = frozenset({"Ari", "Chen", "Eli", "Hiro", "Jin", "Sam", "Wei"})

LAST_NAMES = """Adams Ahmed Ali Alvarez Andersen Baker Banerjee Becker Bennett Berg Brooks Brown Campbell Carter Castro Chan
Chen Clark Cohen Costa Cruz Das Davies Diaz Dubois Edwards Evans Fernandez Fischer Fleming Garcia Gomez Gonzalez Green
Gupta Hall Hansen Harris Hayes Hernandez Hill Hoffmann Hughes Ibrahim Ito Jacobs Jensen Johnson Jones Kang Khan Kim King
Klein Kowalski Kumar Larsen Lee Lewis Lim Lin Lopez Martin Martinez Mehta Meyer Miller Moreno Morris Muller Murphy Nair
Nakamura Nguyen Novak Oliver Ortiz Park Patel Perez Petrov Quinn Ramirez Reed Reyes Richter Rivera Roberts Rossi Russo
Santos Sato Schmidt Schneider Scott Shah Silva Singh Smith Suzuki Tanaka Taylor Torres Turner Walker Wang Weber Wilson Wong
Wright Yamamoto Yilmaz Young Zhang Zhou""".split()

# Brand-like organisation and product names are compounds PREFIX + SUFFIX (``NovaTech``).
BRAND_PREFIXES = """Alpha Amber Apex Aqua Astra Atlas Aura Axis Beacon Blue Bold Bright Cedar Clear Cloud Cobalt Coral
Crest Crystal Delta Echo Ever Falcon Flux Fusion Gold Granite Green Harbor Helio Horizon Indigo Iron Jade Keystone Kinetic
Lumen Luna Maple Meridian Metro Nexa Noble North Nova Oak Omni Onyx Orbit Pacific Peak Pine Pixel Polar Prime Pulse
Quantum Radiant Red River Rock Sage Silver Sky Solar Sonic Spark Star Stone Summit Sun Swift Terra Titan True Unity Urban
Vantage Vector Velo Verde Vista Vital Wave West Wild Zen""".split()
BRAND_SUFFIXES = """Bit Bridge Cast Core Craft Data Dyne Edge Field Flow Forge Gate Grid Hub Labs Lane Leaf Light Line Link
Logic Matrix Mind Motion Net Path Point Port Ridge Scale Scope Shift Soft Sphere Stack Stream Sync Tech Tide Trail Ware
Wave Works""".split()
ORG_KINDS = """Inc. Labs Software Solutions Systems Technologies Group Partners Pharmaceuticals Foods Motors Robotics
Analytics Energy Logistics Media Studios Capital Biotech Networks Games Textiles Airlines Hotels Foundation Institute""".split()

# Real cities and towns (the paper's needles use Berlin, Madrid, Mumbai, Antibes, Cayuga, New York).
CITIES = """Aarhus Accra Adelaide Agra Albany Algiers Amman Amsterdam Ankara Antibes Athens Atlanta Auckland Austin
Baltimore Bangkok Barcelona Basel Belfast Belgrade Bergen Berlin Bern Bilbao Birmingham Bogota Bologna Bordeaux Boston
Bratislava Bremen Brisbane Bristol Brno Brussels Bucharest Budapest Cairo Calgary Cambridge Canberra Cardiff Cayuga
Chennai Chicago Cologne Copenhagen Cork Dakar Dallas Delft Denver Dhaka Dresden Dublin Durban Edinburgh Eindhoven Florence
Fresno Galway Geneva Genoa Ghent Glasgow Gothenburg Granada Graz Hamburg Hanoi Hanover Havana Helsinki Houston Hyderabad
Innsbruck Istanbul Jakarta Kampala Karachi Kiev Krakow Kyoto Lagos Lahore Leeds Leipzig Lille Lima Lisbon Liverpool
Ljubljana Lyon Madrid Malmo Manchester Manila Marseille Melbourne Memphis Milan Montreal Mumbai Munich Nagoya Nairobi
Nantes Naples Nice Osaka Oslo Ottawa Oxford Palermo Porto Prague Pune Quito Riga Rotterdam Salzburg Santiago Seattle
Seville Seoul Sheffield Stockholm Stuttgart Sydney Tallinn Tampere Tbilisi Tokyo Toronto Toulouse Turin Tucson Utrecht
Valencia Vancouver Verona Vienna Vilnius Warsaw Winnipeg Zagreb Zurich""".split()

# Roles of people in organisations (relation words shared by needles and distractors).
ROLES = ["CEO", "CFO", "CTO", "COO", "president", "chairman", "Chief Science Officer", "head of research",
         "head of marketing", "lead engineer", "general counsel", "head of design", "chief economist", "treasurer"]
# Descriptors in front of a name, as in the paper's App. B haystack ("Director James Park", "Fitness startup VitalMotion").
PERSON_DESCRIPTORS = ["Director", "Engineer", "Architect", "Chef", "Professor", "Novelist", "Photographer", "Economist",
                      "Education reformist", "Entrepreneur", "Journalist", "Physician", "Designer", "Investor",
                      "Urban planner", "Marine biologist", "Pianist", "Software developer"]
ORG_DESCRIPTORS = ["Tech research group", "Fitness startup", "Logistics firm", "Biotech company", "Media company",
                   "Energy startup", "Design studio", "Nonprofit", "Software maker", "Food company", "Robotics firm",
                   "Fintech startup", "Consulting firm", "Shipping company", "Game studio"]
PRODUCT_CATEGORIES = ["smart wearable", "data storage product", "AI platform", "vaccine", "electric scooter",
                      "project-management tool", "fitness tracker", "payment app", "home robot", "solar panel",
                      "language-learning app", "noise-cancelling headphone", "drone", "electric bicycle",
                      "cloud database", "smart thermostat", "antiviral drug", "video-editing suite", "e-reader",
                      "water filter", "security camera", "meal-kit service", "smart speaker", "budgeting app",
                      "3D printer", "air purifier", "translation service", "coffee machine", "gaming console",
                      "satellite modem"]
FIELDS = ["cloud computing", "renewable energy", "cybersecurity", "medical imaging", "logistics software", "organic food",
          "battery storage", "online education", "quantum sensors", "genomics", "urban mobility", "data analytics",
          "precision farming", "space tourism", "digital payments", "water treatment", "industrial robotics",
          "video streaming", "sports analytics", "sustainable fashion"]
SUBJECTS = ["economics", "chemistry", "architecture", "computer science", "law", "medicine", "physics", "philosophy",
            "history", "mathematics", "biology", "journalism", "music", "engineering", "design"]
VENUE_KINDS = ["restaurant", "bakery", "bookshop", "cafe", "hotel", "gallery", "vineyard", "bistro", "gym",
               "jazz club", "flower shop", "bicycle shop"]
CUISINES = ["French", "Italian", "Japanese", "Mexican", "Thai", "Lebanese", "Greek", "Indian", "Korean", "Spanish",
            "Peruvian", "Turkish"]
# Names of venues, pets and boats: evocative single words (the paper's needles name a restaurant "Chevalier").
VENUE_NAMES = """Alouette Belvedere Bellini Bramble Cantina Caravel Chevalier Cinnabar Corsair Dovetail Elderflower
Fandango Galleon Gingko Harlequin Hearth Juniper Kestrel Lantern Larkspur Magnolia Mistral Nightjar Oleander Paloma
Pimento Quartz Rosemary Saffron Sirocco Tamarind Thistle Verbena Willow Zephyr Zinnia Marigold Sorrel Anise
Chicory""".split()
DEPARTMENTS = ["sales", "research", "marketing", "engineering", "legal", "design", "finance", "support", "logistics",
               "security"]
EVENTS = [
    "released a documentary on {topic}", "promoted new teaching methods for {topic}", "gave a keynote on {topic}",
    "published a book about {topic}", "organized a conference on {topic}", "won an award for work on {topic}",
    "launched a podcast about {topic}", "led a campaign for {topic}", "funded a scholarship in {topic}",
    "hosted a workshop on {topic}",
]
ORG_EVENTS = [
    "unveiled a new system for {topic}", "optimized its algorithms for {topic}", "opened a research center for {topic}",
    "distributed grants for {topic}", "partnered with local schools on {topic}", "announced a pilot program for {topic}",
    "raised funding to expand its work on {topic}", "hired a new team for {topic}",
]
TOPICS = ["tidal energy", "endangered rainforests", "coral reefs", "urban gardening", "machine learning", "clean water",
          "public libraries", "electric buses", "rare diseases", "coastal erosion", "early childhood education",
          "wildfire prevention", "affordable housing", "vertical farming", "migratory birds", "ocean plastics",
          "mental health", "recycled textiles", "rural broadband", "heritage buildings", "bee conservation",
          "desert agriculture", "local journalism", "jazz history", "space debris"]
