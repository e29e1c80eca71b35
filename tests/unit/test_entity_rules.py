"""Every entity rule can be switched off on its own, so the entity evaluation can measure each one."""

from newskg.extract.entities.rules import EntityRules

# Off by default because they lost on the held-out half of the gold set (`newskg eval entities --split test`, the
# issue 16 tuning): still measured by the evaluation, which switches every rule on in turn.
OFF_BY_DEFAULT = {"tidy_spans"}


def test_every_rule_but_those_that_lost_on_held_out_data_is_on_by_default_and_none_switches_every_one_off():
    names = EntityRules.names()
    assert {name for name in names if not getattr(EntityRules(), name)} == OFF_BY_DEFAULT
    assert not any(getattr(EntityRules.none(), name) for name in names)


def test_with_rules_enables_only_the_named_ones():
    rules = EntityRules.none().with_rules("short_form_coref")
    assert [name for name in EntityRules.names() if getattr(rules, name)] == ["short_form_coref"]
