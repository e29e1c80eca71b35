"""`newskg eval entities`: mention precision/recall/F1, type and linking accuracy of the extract stage's entity
code on an annotated gold set (tests/fixtures/entities/), before and after each entity rule."""
