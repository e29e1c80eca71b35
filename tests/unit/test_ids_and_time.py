import datetime as dt

import pendulum
import pytest

from newskg.core import ids
from newskg.core.timeaxes import day_from_key, day_iso, day_key, day_words, epoch_ms, iso, parse_instant


def test_canonical_url_drops_tracking_fragment_and_case():
    a = ids.canonical_url("HTTPS://www.Example.com/news/story/?utm_source=x&id=3#top")
    b = ids.canonical_url("https://example.com/news/story?id=3")
    assert a == b == "https://example.com/news/story?id=3"


def test_article_id_prefers_url_then_text():
    assert ids.article_id("https://example.com/a?utm_medium=rss", "x") == ids.article_id("https://example.com/a", "y")
    assert ids.article_id(None, "Same  TEXT") == ids.article_id(None, "same text")
    with pytest.raises(ValueError):
        ids.article_id(None, None)


def test_content_ids_are_stable_and_distinct():
    assert ids.chunk_id("Hello   World") == ids.chunk_id("hello world")
    assert ids.entity_id("Doja Cat", "PERSON") != ids.entity_id("Doja Cat", "ORG")
    assert ids.digest("ab", "c") != ids.digest("a", "bc")
    assert ids.point_uuid("i_1") == ids.point_uuid("i_1") != ids.point_uuid("i_2")


def test_day_keys_are_utc_days():
    assert day_key("2023-08-31") == 20230831
    assert day_key("2023-08-31T23:30:00-05:00") == 20230901  # 04:30 UTC next day
    assert day_key(dt.date(2024, 2, 29)) == 20240229 == day_key(pendulum.date(2024, 2, 29))
    eastern = dt.timezone(dt.timedelta(hours=-5))
    assert day_key(dt.datetime(2023, 8, 31, 23, 30, tzinfo=eastern)) == 20230901  # an instant, not a calendar day
    assert day_words(20240305) == "March 5, 2024" and day_words(20231231) == "December 31, 2023"
    assert day_iso(20230831) == "2023-08-31"
    assert day_from_key(20230831) == dt.date(2023, 8, 31)


def test_instants_are_normalised_to_utc():
    assert iso("2023-08-31T12:00:00+02:00") == "2023-08-31T10:00:00Z"
    assert iso(dt.datetime(2023, 8, 31, 12, 0)) == "2023-08-31T12:00:00Z"  # naive means UTC
    assert epoch_ms("1970-01-01T00:00:01Z") == 1000
    assert parse_instant("Thu, 31 Aug 2023 10:00:00 GMT").day == 31


def test_garbage_dates_raise():
    with pytest.raises(ValueError):
        day_key("not a date at all")
