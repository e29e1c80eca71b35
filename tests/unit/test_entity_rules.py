"""Every entity rule can be switched off on its own, so the entity evaluation can measure each one."""

from extract.entities.rules import EntityRules


def test_all_rules_on_by_default_and_none_switches_every_one_off():
    names = EntityRules.names()
    assert all(getattr(EntityRules(), name) for name in names)
    assert not any(getattr(EntityRules.none(), name) for name in names)


def test_with_rules_enables_only_the_named_ones():
    rules = EntityRules.none().with_rules("short_form_coref")
    assert [name for name in EntityRules.names() if getattr(rules, name)] == ["short_form_coref"]
