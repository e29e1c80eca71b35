"""Which fetch targets a feed may point us at: the address check (pure, no network beyond name resolution of
literal addresses and localhost)."""

import ipaddress

import pytest

from newskg.ingest.sources.http import FetchRefused, check_target, non_public_reason


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.10", "private"),
        ("169.254.169.254", "link-local"),  # cloud metadata endpoints
        ("fe80::1", "link-local"),
        ("fc00::1", "private"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("100.64.0.1", "not-global"),  # carrier-grade NAT, shared address space
        ("192.0.2.1", "private"),  # documentation range (Python counts it as private)
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped IPv6 judged as its IPv4
        ("::ffff:10.0.0.1", "private"),
        ("2002:7f00:1::", "loopback"),  # 6to4 wrapping 127.0.0.1
    ],
)
def test_non_public_addresses_are_named(address, reason):
    assert non_public_reason(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses_pass(address):
    assert non_public_reason(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/feed",
        "http://localhost/x",
        "https://[::1]/a",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.5/",
    ],
)
def test_non_public_targets_are_refused_unless_allowed(url):
    with pytest.raises(FetchRefused) as exc:
        check_target(url, allow_private=False)
    assert exc.value.reason == "refused_target" and "NEWSKG_FETCH_ALLOW_PRIVATE" in exc.value.detail
    check_target(url, allow_private=True)  # allowed: no exception


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/a", "gopher://x/", "http:///nohost"])
def test_only_http_urls_with_a_host(url):
    with pytest.raises(FetchRefused) as exc:
        check_target(url, allow_private=True)
    assert exc.value.reason == "refused_target"


@pytest.mark.parametrize(
    "url", ["http://h:abc/", "http://example.com:99999/", "http://[::1/", "http://a\x01b.example/", "https://h:-1/"]
)
def test_a_url_that_does_not_parse_is_refused_with_its_own_reason(url):
    """review finding: feeds — `urlsplit(url).port` raised a plain ValueError (and httpx.URL an InvalidURL, no
    httpx.HTTPError) that stopped the whole poll; it is a refusal with the reason `invalid_url`."""
    with pytest.raises(FetchRefused) as exc:
        check_target(url, allow_private=True)
    assert exc.value.reason == "invalid_url" and repr(url) in exc.value.detail


def test_the_check_returns_the_addresses_it_vetted():
    """review finding: DNS rebinding — the connection is made to these addresses, not to a new resolution."""
    target = check_target("http://127.0.0.1:8080/feed", allow_private=True)
    assert [str(a) for a in target.addresses] == ["127.0.0.1"] and target.url.host == "127.0.0.1"
