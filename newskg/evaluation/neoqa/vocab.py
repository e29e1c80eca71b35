"""Word lists the offline generator draws from: genres with entity-free seed summaries (NeoQA C.1.1), the pieces of
fictional names, and the fillers of the fact frames. Data only; our own wording throughout."""

from __future__ import annotations

from typing import TypedDict


class GenreSpec(TypedDict):
    """A genre's wording: its category, event types, seed summaries, and the initiatives and topics frames use."""

    category: str
    event_types: list[str]
    summaries: list[str]
    initiatives: list[str]
    topics: list[str]


GENRES: dict[str, GenreSpec] = {
    "local-news": {
        "category": "Local News",
        "event_types": ["Public Safety Initiatives", "Urban Planning Disputes"],
        "summaries": [
            "A neighbourhood campaigns for safer crossings near its primary school after a winter of near misses.",
            "Residents of a riverside district push back against plans to turn a disused quay into a car park.",
            "A town council weighs a proposal to close its historic market street to through traffic.",
        ],
        "initiatives": [
            "a night-time street lighting upgrade",
            "a pedestrian-only market street",
            "a volunteer neighbourhood patrol",
            "a riverside flood barrier",
            "a community garden on the old depot site",
            "a late-night bus service",
        ],
        "topics": ["traffic plan", "lighting upgrade", "market reform", "flood barrier"],
    },
    "business": {
        "category": "Business",
        "event_types": ["Mergers and Takeovers", "Supply Chain Scandals"],
        "summaries": [
            "A family-run bakery chain faces questions about where its premium ingredients really come from.",
            "Two regional logistics firms announce talks about combining their delivery networks.",
            "A start-up selling refillable cleaning products expands faster than its factory can keep up.",
        ],
        "initiatives": [
            "an independent audit of its suppliers",
            "a merger of the two delivery fleets",
            "a second production line",
            "an ethical sourcing certificate",
            "a profit-sharing plan for staff",
            "a buy-back of unsold stock",
        ],
        "topics": ["merger", "audit", "expansion", "certification scheme"],
    },
    "environment": {
        "category": "Environment",
        "event_types": ["Wildlife Protection", "Water Quality Concerns"],
        "summaries": [
            "A lakeside community notices fish dying along its shore after a dry summer.",
            "Conservation volunteers report that a rare heron has returned to a drained marsh.",
            "A coastal town debates banning single-use plastics from its beaches.",
        ],
        "initiatives": [
            "a ban on motor boats on the lake",
            "a wetland restoration fund",
            "weekly water testing at six sites",
            "a protected nesting zone",
            "a beach plastics ban",
            "a tree-planting corridor",
        ],
        "topics": ["restoration plan", "testing programme", "plastics ban", "nesting zone"],
    },
    "education": {
        "category": "Education",
        "event_types": ["Curriculum Reform", "School Funding Disputes"],
        "summaries": [
            "A rural school district considers merging two small secondary schools.",
            "Teachers at a vocational college object to a new timetable that lengthens the school day.",
            "A city introduces free breakfast clubs in its primary schools.",
        ],
        "initiatives": [
            "a four-day teaching week",
            "a merged secondary campus",
            "free breakfast clubs",
            "a coding curriculum for every year group",
            "smaller class sizes in the first year",
            "an evening apprenticeship track",
        ],
        "topics": ["timetable change", "campus merger", "breakfast scheme", "curriculum reform"],
    },
    "sports": {
        "category": "Sports",
        "event_types": ["Player Transfers", "Stadium Developments"],
        "summaries": [
            "A lower-league football club plans to move out of the stadium it has used for a century.",
            "A promising young runner is caught between two rival training academies.",
            "A cycling league introduces a salary cap to protect its smaller teams.",
        ],
        "initiatives": [
            "a new stadium on the edge of town",
            "a salary cap for every team",
            "a youth academy scholarship",
            "a shared training ground",
            "a fan ownership scheme",
            "a women's league expansion",
        ],
        "topics": ["stadium move", "salary cap", "academy deal", "fan ownership scheme"],
    },
    "health": {
        "category": "Health",
        "event_types": ["Hospital Services", "Public Health Campaigns"],
        "summaries": [
            "A small hospital announces that its maternity ward may close for lack of staff.",
            "A health board launches a campaign to get older residents screened for hearing loss.",
            "Pharmacists in a market town offer walk-in blood pressure checks.",
        ],
        "initiatives": [
            "a mobile screening van",
            "a night-shift nursing bonus",
            "a walk-in blood pressure clinic",
            "a merged maternity service",
            "a free hearing test week",
            "a telephone triage line",
        ],
        "topics": ["screening campaign", "ward closure", "triage line", "staffing plan"],
    },
    "technology": {
        "category": "Technology",
        "event_types": ["Product Launches", "Data Privacy Disputes"],
        "summaries": [
            "A startup's home energy monitor is found to send data to third parties without clear consent.",
            "A municipal wireless network promises free connections in every public library.",
            "A maker of farm drones launches a model that can spray individual plants.",
        ],
        "initiatives": [
            "an opt-in data sharing setting",
            "free public wireless access",
            "an open repair manual",
            "a local data storage centre",
            "a drone flight registry",
            "a bug bounty programme",
        ],
        "topics": ["privacy review", "network rollout", "product recall", "repair programme"],
    },
    "art": {
        "category": "Art",
        "event_types": ["Public Art Controversies", "Gallery Openings"],
        "summaries": [
            "A town commissions a large outdoor sculpture and asks residents to help choose the site.",
            "A closed textile mill is turned into studios for young artists.",
            "A gallery faces criticism for moving its collection out of the town centre.",
        ],
        "initiatives": [
            "an outdoor sculpture trail",
            "artist studios in the old mill",
            "free entry on Sundays",
            "a mural on the station wall",
            "a travelling exhibition",
            "an artists' residency grant",
        ],
        "topics": ["sculpture project", "studio conversion", "gallery move", "mural commission"],
    },
}

DIRECTIONS = [  # how the next event may turn (NeoQA steps 11-12: diverse, mutually exclusive continuations)
    "Opposition to {thing} grows and a public hearing is demanded.",
    "Officials delay {thing} after an unexpected cost estimate.",
    "A compromise on {thing} is reached after weeks of talks.",
    "An independent review questions how {thing} was approved.",
    "Supporters of {thing} organise a public event to win over sceptics.",
    "A rival proposal appears and splits support for {thing}.",
    "The first results of {thing} are published and divide opinion.",
    "Funding for {thing} is suddenly withdrawn.",
]

ONSETS = [
    "Al",
    "Bel",
    "Cor",
    "Dra",
    "El",
    "Fen",
    "Gal",
    "Har",
    "Ith",
    "Jor",
    "Kel",
    "Lor",
    "Mar",
    "Nev",
    "Or",
    "Pel",
    "Quen",
    "Ros",
    "Sel",
    "Tal",
    "Ul",
    "Var",
    "Wen",
    "Yor",
    "Zer",
    "Bram",
    "Cal",
    "Dor",
    "Esk",
    "Fal",
]
MIDDLES = ["a", "e", "i", "o", "ai", "ea", "io", "ra", "le", "ri", "ve", "na", "do", "mi", "se"]
GIVEN_ENDINGS = ["a", "en", "is", "o", "ine", "ar", "el", "ia", "us", "ette", "an", "ir"]
FAMILY_ENDINGS = ["wick", "ran", "lend", "ovic", "mere", "sten", "ley", "dane", "holt", "ek", "ard", "ison"]
PLACE_ENDINGS = ["vale", "ford", "haven", "mere", "crest", "holm", "wick", "bury", "stead", "moor", "gate", "ridge"]
ORG_KINDS = {
    "local-news": ["Residents Council", "Neighbourhood Association", "Town Council", "Civic Trust"],
    "business": ["Holdings", "Logistics", "Bakeries", "Trading Company"],
    "environment": ["Conservation Trust", "Water Authority", "Wildlife Society", "Green Alliance"],
    "education": ["School Board", "Teachers Union", "Learning Trust", "College"],
    "sports": ["Athletic Club", "Sports League", "Supporters Trust", "Cycling Union"],
    "health": ["Health Board", "Nursing Guild", "Patients Forum", "Medical Centre"],
    "technology": ["Systems", "Networks", "Labs", "Digital Authority"],
    "art": ["Arts Collective", "Gallery Trust", "Sculpture Society", "Cultural Committee"],
}
BUILDING_KINDS = ["Hall", "Civic Centre", "Library", "Exchange", "Pavilion", "Assembly Rooms"]
EVENT_KINDS = ["Forum", "Hearing", "Open Day", "Summit", "Festival", "Town Meeting"]
PRODUCT_KINDS = ["sensor kit", "mobile app", "water filter", "e-bike", "smart meter", "training tracker"]
ART_KINDS = ["bronze sculpture", "mural", "tapestry", "light installation", "photo series"]
ART_NOUNS = ["Tides", "Lanterns", "Echoes", "Harvests", "Thresholds", "Embers", "Currents", "Orchards"]
ART_ABSTRACTS = ["Renewal", "Patience", "Return", "Belonging", "Memory", "Courage", "Stillness"]
MISC_WORDS = ["Clearwater", "Fairshare", "Openhand", "Brightpath", "Greenline", "Lastlight", "Truemark"]
ROLES = [
    "chairperson",
    "treasurer",
    "spokesperson",
    "director",
    "secretary",
    "chief engineer",
    "lead organiser",
    "head of communications",
]
PROFESSIONS = [
    "retired teacher",
    "pharmacist",
    "architect",
    "café owner",
    "software developer",
    "nurse",
    "civil engineer",
    "freelance journalist",
    "shop owner",
    "data analyst",
]
EDUCATION = [
    "a degree in economics",
    "a diploma in nursing",
    "a master's degree in planning",
    "a degree in journalism",
    "an apprenticeship in carpentry",
    "a doctorate in ecology",
]
OUTCOMES = [
    "cut waiting times by a third",
    "cost more than first planned",
    "need another round of consultation",
    "be finished before the winter",
    "create at least forty jobs",
    "face a legal challenge",
    "double the number of visitors",
    "be reviewed again next year",
]
CRITICISMS = [
    "rushed",
    "too expensive",
    "poorly explained",
    "unfair to small businesses",
    "too timid",
    "a waste of public money",
]
GROUPS = ["residents", "volunteers", "parents", "shop owners", "students", "pensioners"]
GROUP_ACTIONS = [
    "signed a letter of support",
    "attended the first public session",
    "joined the waiting list",
    "volunteered to help",
    "filed written objections",
]
DEMANDS = [
    "publish the full cost estimate",
    "hold a public vote",
    "pause the work until spring",
    "extend the consultation",
    "meet residents in person",
]
DETAILS = [  # what an uncertain-specificity question adds: plausible, and never stated in any outline
    "during a closed-door meeting",
    "in a letter sent to every household",
    "after consulting outside lawyers",
    "in a radio interview",
    "before the annual budget vote",
    "with the backing of two neighbouring towns",
]
