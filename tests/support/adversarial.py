"""A seeded adversarial corpus for the whole pipeline (tests/integration/test_adversarial_corpus.py): the three
classes of issue #28's review, at least 20 cases each, mixed with good articles.

- `stops`: records that used to stop a stage (or crash-loop it on redelivery): plain text over spaCy's
  `max_length`, integers of thousands of digits or outside 64 bits, NaN/Infinity, lone surrogates (escaped and as
  raw bytes), invalid or deeply nested JSON, records of the wrong kind or version, on the articles topic and on the
  chunks topic, and chunks the graph refuses (a NUL) or the extractor cannot validate.
- `vanishes`: input that used to vanish from `newskg ingest files`: empty pages and texts, corrupt gzip, JSONL lines
  whose URL has a bad port, NUL bytes in the text.
- `feeds`: feed entries with links that do not parse, schemes that are not fetched, empty bodies, and links (or
  redirects) to private, loopback, link-local and otherwise non-public addresses.

Every case says what must become of it: exactly one dead letter (stage and reason code) found by the case's
`needle` in the letter's key or payload excerpt, or — a good item, including the adversarial ones the stages must
repair rather than refuse — its `needle` in a chunk of the graph. Everything is drawn from `random.Random(seed)`:
the same seed gives the same bytes.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape

from newskg.core.ids import chunk_id, source_id
from newskg.core.records import Chunk

STOPS, VANISHES, FEEDS, GOOD = "stops", "vanishes", "feeds", "good"
DAY = "2024-03-05"
BINARY = ("process", "binary_payload")  # every article is published within a few days of it: one dedup window
RAW = "@@raw@@"  # placeholder for a JSON token spliced into a serialised record


@dataclass(frozen=True)
class Case:
    name: str  # unique
    cls: str  # STOPS | VANISHES | FEEDS | GOOD (a good article that is not adversarial)
    what: str
    needle: str  # in the dead letter's key or payload excerpt; for an item that lands, in a chunk's text
    stage: str | None = None  # the dead letter's stage: process, extract, files, feeds; None: it lands
    reason: str | None = None
    # also written by the extract stage with its dead letter: the chunk's dedup signature released
    releases: str | None = None

    @property
    def bad(self) -> bool:
        return self.stage is not None


@dataclass(frozen=True)
class Route:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict[str, str])


@dataclass
class Corpus:
    seed: int
    cases: list[Case] = field(default_factory=list[Case])
    articles: list[tuple[str, bytes]] = field(default_factory=list[tuple[str, bytes]])  # onto the articles topic
    chunks: list[tuple[str, bytes]] = field(default_factory=list[tuple[str, bytes]])  # onto the chunks topic
    files: dict[str, bytes] = field(default_factory=dict[str, bytes])  # relative path -> content
    # feed entry links, "{public}" / "{private}" standing for the two sites' bases
    feed_links: list[str] = field(default_factory=list[str])
    routes: dict[str, Route] = field(default_factory=dict[str, Route])  # the public site's pages, by path

    def add(self, case: Case) -> Case:
        assert case.name not in {c.name for c in self.cases}, case.name
        self.cases.append(case)
        return case

    def of(self, cls: str) -> list[Case]:
        return [c for c in self.cases if c.cls == cls]

    def bases(self, public: str, private: str) -> dict[str, str]:
        return {"public": public, "private": private, "private_port": private.rsplit(":", 1)[1]}

    def feed(self, public: str, private: str) -> bytes:
        """The RSS of the public site: every entry link with the sites' real addresses."""
        items = "".join(
            f"<item><title>Entry {n}</title><link>{escape(link.format(**self.bases(public, private)))}</link>"
            f"<pubDate>Tue, 05 Mar 2024 0{n % 10}:00:00 GMT</pubDate></item>"
            for n, link in enumerate(self.feed_links)
        )
        return (
            '<?xml version="1.0"?><rss version="2.0"><channel><title>Adversarial Wire</title>'
            f"<link>{escape(public)}</link>{items}</channel></rss>"
        ).encode()

    def site(self, public: str, private: str) -> dict[str, Route]:
        """The public site's routes, redirect targets with the sites' real addresses; its feed at /feed.xml."""
        bases = self.bases(public, private)
        routes = {
            path: Route(r.status, r.body, {k: v.format(**bases) for k, v in r.headers.items()})
            for path, r in self.routes.items()
        }
        routes["/robots.txt"] = Route(200, b"User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"})
        routes["/feed.xml"] = Route(200, self.feed(public, private), {"Content-Type": "application/rss+xml"})
        return routes

    def check(self) -> None:
        """At least 20 bad cases of each class, and no needle inside another (a letter or chunk names one case)."""
        for cls in (STOPS, VANISHES, FEEDS):
            assert sum(c.bad for c in self.of(cls)) >= 20, cls
        needles = [c.needle for c in self.cases]
        assert len(set(needles)) == len(needles)
        for needle in needles:
            assert [other for other in needles if needle in other] == [needle], needle


# --- good text ----------------------------------------------------------------------------------------------------

# fmt: off
FIRST = ["Amara", "Bastien", "Celia", "Dmitri", "Esther", "Farouk", "Greta", "Hiroshi", "Ingrid", "Jonas", "Keiko",
         "Lucas", "Mireille", "Nikolai", "Olga", "Pavel", "Quentin", "Rosa", "Stefan", "Tomasz", "Ulla", "Viktor"]
LAST = ["Okafor", "Lindqvist", "Moreau", "Petrov", "Haddad", "Tanaka", "Novak", "Schreiber", "Alvarez", "Kowalski",
        "Brennan", "Castellanos", "Dahlberg", "Eriksen", "Fontaine", "Gallagher", "Iwasaki", "Jankowski"]
CITIES = ["Lyon", "Gdansk", "Porto", "Tampere", "Bologna", "Graz", "Valencia", "Utrecht", "Brno", "Aarhus", "Cork",
          "Ghent", "Trieste", "Malmo", "Bilbao", "Leipzig"]
ORGS = ["the Northern Rail Authority", "Helix Biotech", "the Harbour Council", "Verdant Energy", "the City Orchestra",
        "Corvid Systems", "the Regional Water Board", "Atlas Shipping", "the Museum of Maps", "Bright Lane Foods"]
# fmt: on
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
TEMPLATES = [
    "{p} met {q} in {c} on {d} to discuss the plans of {o}.",
    "{o} said on {d} that {p} would lead its new office in {c}.",
    "{p} signed an agreement with {o} worth {n} million euros.",
    "Residents of {c} protested outside the offices of {o} for {n} hours.",
    "{q} praised {p} for the work on the {c} harbour project.",
    "The council of {c} approved a budget of {n} million for {o} after a long debate.",
    "{p} told reporters in {c} that {o} had hired {n} engineers this year.",
    "{q} resigned from {o} on {d}, citing a dispute over the {c} contract.",
    "Police in {c} said {n} people were evacuated after a fire near the station.",
    "{p} and {q} opened an exhibition on the history of {c} at the old market hall.",
    "{o} will close its plant in {c} by the end of the year, {p} confirmed.",
    "A court in {c} fined {o} {n} thousand euros for late payments to suppliers.",
]


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def sentences(rng: random.Random, count: int) -> list[str]:
    picked = rng.sample(TEMPLATES, count)
    return [
        t.format(
            p=person(rng),
            q=person(rng),
            c=rng.choice(CITIES),
            d=rng.choice(DAYS),
            o=rng.choice(ORGS),
            n=rng.randint(2, 950),
        )
        for t in picked
    ]


def story(rng: random.Random, needle: str, count: int = 6) -> str:
    """A short news text whose first sentence names `needle` (a token no other case contains)."""
    return " ".join([f"Report {needle} from the regional desk.", *sentences(rng, count)])


def page(title: str, text: str) -> str:
    paragraphs = "".join(f"<p>{escape(p)}</p>" for p in text.split("\n") if p.strip())
    return (
        f'<html lang="en"><head><title>{escape(title)}</title></head><body><nav>Home | World | Sport</nav>'
        f"<article><h1>{escape(title)}</h1>{paragraphs}</article><footer>Contact us</footer></body></html>"
    )


# --- records as bytes ---------------------------------------------------------------------------------------------


def raw_article(text: str | None = None, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "kind": "RawArticle",
        "schema_version": 1,
        "text": text,
        "source": "adversarial",
        "fetched_at": f"{DAY}T12:00:00Z",
        "published": DAY,
    }
    return record | fields


def spliced(record: dict[str, Any], field_name: str, token: str) -> bytes:
    """The record's JSON with `token` (raw JSON text, valid or not) as the value of `field_name`."""
    return json.dumps({**record, field_name: RAW}).replace(json.dumps(RAW), token, 1).encode()


def chunk_record(text: str, article: str, day: int = 20240305) -> dict[str, Any]:
    chunk = Chunk(
        id=chunk_id(text),
        text=text,
        sentences=[text],
        article_id=article,
        article_ids=[article],
        source="adversarial",
        source_id=source_id("adversarial"),
        day=day,
        published=f"{DAY}T08:00:00Z",
        ingested_at=f"{DAY}T09:00:00Z",
        ingested_ms=1709629200000,
        sentence_start=0,
        sentence_end=1,
    )
    return {"kind": "Chunk", **chunk.model_dump(mode="json")}


def huge_integer(rng: random.Random) -> str:
    return str(rng.randint(1, 9)) + "".join(rng.choice("0123456789") for _ in range(rng.randint(5000, 5600)))


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def generate(seed: int) -> Corpus:
    rng = random.Random(seed)
    corpus = Corpus(seed)
    _stops(corpus, rng)
    _vanishes(corpus, rng)
    _feeds(corpus, rng)
    _good(corpus, rng)
    corpus.check()
    return corpus


def _stops(corpus: Corpus, rng: random.Random) -> None:
    """Class (a), straight onto the articles and chunks topics, each message keyed `key-NAME` (the needle of its
    dead letter: no article id, hex digest or excerpt of another case holds it); an article that lands names its
    own needle in its text."""
    numbers = iter(range(1, 100))

    def article(what: str, value: bytes, reason: str | None = None, needle: str | None = None) -> None:
        name = f"a{next(numbers):02d}"
        stage = "process" if reason else None
        corpus.add(Case(name, STOPS, what, needle or f"key-{name}", stage, reason))
        corpus.articles.append((f"key-{name}", value))

    def chunk(what: str, value: bytes, reason: str, releases: str | None = None) -> None:
        name = f"a{next(numbers):02d}"
        corpus.add(Case(name, STOPS, what, f"key-{name}", "extract", reason, releases))
        corpus.chunks.append((f"key-{name}", value))

    # Over spaCy's max_length (1,000,000 characters: E088 stopped the process stage, again on every restart). The
    # padding holds no sentence, which keeps the corpus quick to extract; the closing sentence, past the first
    # million characters, must land too.
    for padding in ("\n", " \t"):
        needle = f"long{len(padding)}x{rng.randint(100, 999)}"
        head, tail = story(rng, needle + "head", 5), f"The closing note {needle}tail was filed late on Tuesday."
        text = head + "\n" + padding * (1_000_001 // len(padding) + rng.randint(1, 500)) + "\n" + tail
        assert len(text) > 1_000_000
        article("plain text over spaCy's max_length", json.dumps(raw_article(text)).encode(), needle=needle + "tail")
    good = raw_article(story(rng, "unused"))
    article("a 5,000-digit integer", spliced(good, "schema_version", huge_integer(rng)), "malformed_json")
    article("a 5,000-digit negative integer", spliced(good, "backfill", "-" + huge_integer(rng)), "malformed_json")
    article(
        "an integer past 64 bits", spliced(good, "schema_version", str(2**64 + rng.randint(0, 99))), "malformed_json"
    )
    article("an integer below int64", spliced(good, "schema_version", str(-(2**63) - 1)), "malformed_json")
    for token in ("NaN", "Infinity", "-Infinity", "1e999"):
        article(f"{token} as a number", spliced(good, "schema_version", token), "malformed_json")
    encoded = json.dumps(good).encode()
    article("JSON cut short", encoded[: rng.randint(10, len(encoded) - 10)], "malformed_json")
    depth = rng.randint(2_000, 60_000)
    article("JSON nested past the parser's limit", b"[" * depth + b"]" * depth, "malformed_json")
    article("a JSON array, not a record", json.dumps([good]).encode(), "malformed_json")
    raw_surrogate = encoded.replace(b"Report", b"Rep\xed\xa0\x80ort", 1)  # U+D800 as (CESU) UTF-8 bytes
    article("a lone surrogate as raw bytes", raw_surrogate, "undecodable_bytes")
    article("bytes that are not UTF-8", b'{"kind": "RawArticle", "text": "\xff\xfe\xfa"}', "undecodable_bytes")
    long_date = raw_article(story(rng, "unused"), published=huge_integer(rng))
    article("a date of 5,000 digits", json.dumps(long_date).encode(), "unparseable_date")
    # Lone surrogates escaped in the JSON ("\ud800") are stripped from text and title: those articles land.
    for where, surrogate in (("text", "\\ud800"), ("text", "\\udfff"), ("text", "\\udc80"), ("title", "\\udbff")):
        needle = f"surr{rng.randint(1000, 9999)}"
        value = json.dumps(raw_article(story(rng, needle), title=f"Title {needle}"))
        if where == "text":
            value = value.replace(f"{needle} from", f"{needle} {surrogate}from", 1)
        else:
            value = value.replace(f"Title {needle}", f"Title{surrogate} {needle}", 1)
        article(f"an escaped lone surrogate ({surrogate}) in the {where}", value.encode(), needle=needle)
    # ... but not from a source name (a constrained string: the record is invalid) or a URL (no canonical id).
    in_source = raw_article(story(rng, "unused"), source="wire\udc00")
    article("a lone surrogate in the source name", json.dumps(in_source).encode(), "invalid_record")
    in_url = raw_article(story(rng, "unused"), url="https://x.example/\ud800")
    article("a lone surrogate in the URL", json.dumps(in_url).encode(), "processing_error")

    # Straight onto the chunks topic: what the extract stage decodes.
    good_chunk = chunk_record(" ".join(sentences(rng, 2)), "a_adversarial")
    chunk("a 5,000-digit integer in a chunk", spliced(good_chunk, "day", huge_integer(rng)), "malformed_json")
    chunk("an integer past 64 bits in a chunk", spliced(good_chunk, "ingested_ms", str(2**64)), "malformed_json")
    chunk("NaN in a chunk", spliced(good_chunk, "sentence_start", "NaN"), "malformed_json")
    chunk("-Infinity in a chunk", spliced(good_chunk, "ingested_ms", "-Infinity"), "malformed_json")
    encoded = json.dumps(good_chunk).encode()
    chunk("a chunk cut short", encoded[: rng.randint(10, len(encoded) - 10)], "malformed_json")
    chunk("a chunk nested past the parser's limit", b"[" * depth + b"]" * depth, "malformed_json")
    chunk("a chunk that is not UTF-8", encoded.replace(b"adversarial", b"advers\xffarial", 1), "undecodable_bytes")
    chunk("a RawArticle on the chunks topic", json.dumps(good).encode(), "wrong_kind")
    newer = json.dumps({**good_chunk, "schema_version": 99}).encode()
    chunk("a chunk of a newer schema", newer, "unsupported_schema_version")
    text = f"{person(rng)} thanked {person(rng)} \x00 in {rng.choice(CITIES)} on {rng.choice(DAYS)}."
    nul = chunk_record(text, "a_nul")
    chunk("a NUL in a chunk's text (the graph refuses it)", json.dumps(nul).encode(), "graph_write_error", nul["id"])
    poison = chunk_record(f"On December 30, {person(rng)} met {person(rng)} in {rng.choice(CITIES)}.", "a_poison")
    poison["day"] = 10000105  # a valid day whose stated date falls before year 1000: the fact fails validation
    chunk("a chunk whose fact fails validation", json.dumps(poison).encode(), "extraction_error", poison["id"])
    text = f"{person(rng)} visited {rng.choice(CITIES)} \ud800 on {rng.choice(DAYS)}."
    lone = chunk_record(text.replace("\ud800", "and"), "a_surrogate_text") | {"text": text, "sentences": [text]}
    chunk("an escaped lone surrogate in a chunk's text", json.dumps(lone).encode(), "invalid_record")
    titled = chunk_record(" ".join(sentences(rng, 2)), "a_surrogate_title") | {"title": "Ti\udfc0tle"}
    chunk("a lone surrogate in a chunk's title", json.dumps(titled).encode(), "graph_write_error", titled["id"])
    lone_id = chunk_record(" ".join(sentences(rng, 2)), "a_surrogate_id") | {"id": "c_\ud800"}
    chunk("an escaped lone surrogate in a chunk's id", json.dumps(lone_id).encode(), "invalid_record")


def _vanishes(corpus: Corpus, rng: random.Random) -> None:
    """Class (b), files for `newskg ingest files` on one folder: a dead letter of the files source is keyed by
    the path (path:line for a JSONL line); one of the process stage carries the case's name in its excerpt."""
    numbers = iter(range(1, 100))

    def file(suffix: str, content: bytes | Callable[[str], bytes], what: str, stage: str, reason: str) -> None:
        """`content`, or content(name) for content that names its case."""
        name = f"b{next(numbers):02d}"
        path = f"{name}_{what.split()[0]}{suffix}"
        corpus.files[path] = content(name) if callable(content) else content
        corpus.add(Case(name, VANISHES, what, path if stage == "files" else f"{name}:", stage, reason))

    for suffix in (".html", ".html", ".htm", ".txt", ".txt"):
        file(suffix, b"", "empty file", "files", "empty_file")
    for suffix in (".txt", ".html"):
        blank = "".join(rng.choice([" ", "\n", "\t", "\r\n"]) for _ in range(rng.randint(1, 40)))
        file(suffix, blank.encode(), "blank file", "files", "empty_file")
    file(".html.gz", gz(b""), "empty gzip", "files", "empty_file")
    file(".txt.gz", gz(b" \n\n "), "blank gzip", "files", "empty_file")
    body = gz(story(rng, "unused").encode())
    file(".html.gz", body[:10] + rng.randbytes(40), "corrupt deflate", "files", "corrupt_gzip")
    file(".txt.gz", body[: len(body) // 2], "truncated gzip", "files", "corrupt_gzip")
    file(".html.gz", b"<html>not gzip at all</html>", "plain html named .gz", "files", "corrupt_gzip")
    file(".txt.gz", body[:-8] + bytes(8), "checksum zeroed", "files", "corrupt_gzip")
    file(".jsonl.gz", b"\x1f\x8b\x08\x00" + rng.randbytes(30), "corrupt jsonl gzip", "files", "corrupt_gzip")
    # NUL bytes in the first 4 KB make the content binary: refused by the process stage (not lost on the way).
    text = story(rng, "unused")
    file(".txt", lambda name: f"{name}: \x00\x00 {text}".encode(), "nul text", *BINARY)
    html = page("Nul", text)
    file(".html", lambda name: html.replace("<body>", f"<body>{name}: \x00", 1).encode(), "nul html", *BINARY)
    line = {"text": "NAME: \x00 " + text, "published": DAY}
    file(".jsonl", lambda name: json.dumps(line).replace("NAME", name, 1).encode(), "nul jsonl", *BINARY)
    # JSONL lines whose URL has a bad port: one dead letter each (key path:line), the good lines around them sent.
    name = f"b{next(numbers):02d}"
    path, lines = f"{name}_ports.jsonl", []
    for port in ("abc", "99999", "-1", "65536", "8x", "1e3"):
        good = f"{name}ok{'abcdef'[len(lines) // 2]}"
        lines.append({"url": f"https://ok.example/{good}", "text": story(rng, good), "published": DAY})
        corpus.add(Case(good, GOOD, "a good JSONL line between bad ones", good))
        lines.append({"url": f"http://news.example:{port}/x", "text": story(rng, "unused"), "published": DAY})
        where = f"{path}:{len(lines)}"
        corpus.add(Case(where, VANISHES, f"a JSONL url with port {port}", where, "files", "invalid_url"))
    corpus.files[path] = "\n".join(json.dumps(line) for line in lines).encode()
    # Lone surrogates escaped in JSONL lines: stripped from the text with or without a URL (the article lands), a
    # URL holding one has no canonical form (a dead letter of the source); the good line after them is sent.
    name = f"b{next(numbers):02d}"
    path = f"{name}_surrogates.jsonl"
    lines = [
        {"url": f"https://wire.example/{name}a", "text": story(rng, f"{name}a").replace(" from", " \ud800from", 1)},
        {"text": story(rng, f"{name}b").replace(" from", " \udfff from", 1), "title": "Surrogate \udc81"},
        {"url": "https://wire.example/\udc80", "text": story(rng, "unused")},
        {"url": f"https://wire.example/{name}c", "text": story(rng, f"{name}c")},
    ]
    corpus.files[path] = "\n".join(json.dumps(line | {"published": DAY}) for line in lines).encode()
    corpus.add(Case(f"{name}a", VANISHES, "a lone surrogate in a JSONL text, with a URL", f"{name}a"))
    corpus.add(Case(f"{name}b", VANISHES, "a lone surrogate in a JSONL text, without a URL", f"{name}b"))
    corpus.add(Case(f"{path}:3", VANISHES, "a lone surrogate in a JSONL URL", f"{path}:3", "files", "invalid_url"))
    corpus.add(Case(f"{name}c", GOOD, "a good line after them", f"{name}c"))
    # A NUL past the first 4 KB is stripped and the article lands.
    for suffix in (".txt", ".jsonl"):
        name = f"b{next(numbers):02d}"
        text = story(rng, name, 4)
        while len(text) < 4_500:  # past the 4 KB that are checked for binary content; all of it new text
            text += "\n" + " ".join(sentences(rng, 6))
        text += f"\nThe end of {name}\x00tail."
        content = text.encode() if suffix == ".txt" else json.dumps({"text": text, "published": DAY}).encode()
        corpus.files[f"{name}_late_nul{suffix}"] = content
        corpus.add(Case(name, VANISHES, "a NUL past the first 4 KB (stripped)", f"{name}tail"))


def _feeds(corpus: Corpus, rng: random.Random) -> None:
    """Class (c): the entries of one feed on the public site. `{private}` is a site on loopback that must never
    see a request. A feed's dead letter is keyed by the entry's link; the case's needle is `/NAME` in it."""
    numbers = iter(range(1, 100))

    def entry(link: str, what: str, reason: str, stage: str = "feeds") -> str:
        name = f"c{next(numbers):02d}"
        corpus.feed_links.append(link.replace("NAME", name))
        corpus.add(Case(name, FEEDS, what, f"/{name}", stage, reason))
        return name

    port = rng.choice(["abc", "99999", "-1", "8x"])
    entry(f"http://h:{port}/NAME", "a link whose port does not parse", "invalid_url")
    entry("http://news.example:65536/NAME", "a port over 65535", "invalid_url")
    entry("http://[::1/NAME", "an unclosed IPv6 literal", "invalid_url")
    entry("http://0177.0.0.1/NAME", "an octal IPv4 literal", "invalid_url")
    schemes = ["file:///etc/NAME", "ftp://127.0.0.1:{private_port}/NAME", "gopher://127.0.0.1/NAME"]
    for link in [*schemes, "javascript:alert('/NAME')", "data:text/html,/NAME"]:
        entry(link, "a scheme that is not fetched", "refused_target")
    for path, route in (
        ("/empty/NAME", Route(200, b"")),
        ("/nocontent/NAME", Route(204, b"")),
        ("/gzipped-empty/NAME", Route(200, gz(b""), {"Content-Encoding": "gzip"})),
    ):
        name = entry("{public}" + path, f"an empty body (HTTP {route.status})", "empty_page")
        corpus.routes[path.replace("NAME", name)] = route
    for path, body in (("/blank/NAME", b"  \n\t  "), ("/nav-only/NAME", page("Nav", "").encode())):
        name = entry("{public}" + path, "a page with no main text", "empty_extraction", stage="process")
        corpus.routes[path.replace("NAME", name)] = Route(200, body, {"Content-Type": "text/html"})
    for link in (
        "{private}/NAME",
        "http://localhost:{private_port}/NAME",
        "http://127.1:{private_port}/NAME",
        "http://2130706433:{private_port}/NAME",
        "http://0x7f000001:{private_port}/NAME",
        "http://[::1]:{private_port}/NAME",
        "http://[::ffff:127.0.0.1]:{private_port}/NAME",
        "http://0.0.0.0:{private_port}/NAME",
        "http://user@127.0.0.1:{private_port}/NAME",
        "HTTP://127.0.0.1:{private_port}/NAME",
        "http://10.0.0.1/NAME",
        "http://192.168.0.1/NAME",
        "http://172.16.0.1/NAME",
        "http://169.254.169.254/latest/meta-data/NAME",
        "http://100.64.0.1/NAME",
        "http://[fc00::1]/NAME",
        "http://[fe80::1]/NAME",
        "http://224.0.0.1/NAME",
    ):
        entry(link, "a link to a non-public address", "refused_target")
    for target in ("{private}/x", "http://169.254.169.254/latest/x", "http://localhost:{private_port}/x"):
        name = entry("{public}/go/NAME", "a redirect to a non-public address", "refused_target")
        corpus.routes[f"/go/{name}"] = Route(302, b"", {"Location": target})
    for _ in range(3):
        name = f"c{next(numbers):02d}"
        first, rest = story(rng, name).split(". ", 1)
        corpus.feed_links.append("{public}/news/" + name)
        html = page(f"Story {name}", f"{first}.\n{rest}").encode()
        corpus.routes[f"/news/{name}"] = Route(200, html, {"Content-Type": "text/html"})
        corpus.add(Case(name, FEEDS, "a good page of the feed", f"Report {name} from"))


def _good(corpus: Corpus, rng: random.Random) -> None:
    """Plain good articles among the bad ones: files of each kind, and JSONL lines with URLs."""
    numbers = iter(range(1, 100))
    for suffix in (".txt", ".html", ".html.gz", ".txt.gz"):
        name = f"g{next(numbers):02d}"
        text = story(rng, name)
        content = (page(f"Story {name}", text) if ".html" in suffix else text).encode()
        corpus.files[f"{name}_good{suffix}"] = gz(content) if suffix.endswith(".gz") else content
        corpus.add(Case(name, GOOD, f"a good {suffix} file", f"Report {name} from"))
    rows = []
    for _ in range(3):
        name = f"g{next(numbers):02d}"
        rows.append({"url": f"https://wire.example/{name}", "text": story(rng, name), "published": DAY})
        corpus.add(Case(name, GOOD, "a good JSONL line", f"Report {name} from"))
    corpus.files["g_good.jsonl"] = "\n".join(json.dumps(row) for row in rows).encode()
