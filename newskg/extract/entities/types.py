"""The entity types we keep, from spaCy's labels."""

LABEL_TO_TYPE = {
    "PERSON": "PERSON",
    "ORG": "ORG",
    "GPE": "PLACE",
    "LOC": "PLACE",
    "EVENT": "EVENT",
    "WORK_OF_ART": "WORK",
    "PRODUCT": "PRODUCT",
    "FAC": "FACILITY",
}
# OTHER: a named thing of none of the kept types that a rule recognised as such (a named animal, NEON's Choupette).
ENTITY_TYPES = tuple(sorted(set(LABEL_TO_TYPE.values()) | {"OTHER"}))
# spaCy's small model often labels a lone surname ORG or GPE; such a mention may still be a person's short form.
PERSON_CONFUSIONS = {"PERSON", "ORG", "PLACE", "PRODUCT", "WORK"}
