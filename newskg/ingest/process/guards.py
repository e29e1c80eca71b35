"""Input the process stage refuses, with a reason code the dead letter carries."""

from __future__ import annotations

from newskg.core.errors import NewskgError

BINARY_MAGIC = (
    b"%PDF",
    b"\x89PNG",
    b"GIF8",
    b"\xff\xd8\xff",
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"\x7fELF",
    b"OggS",
    b"RIFF",
    b"\x00\x00\x01\x00",
)


class Rejected(NewskgError):
    """Raised for input that cannot become an article; `reason` is a stable code, the message says why."""

    REASON = "processing_error"

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}", reason=reason)
        self.detail = detail


def check_size(payload: bytes, limit: int) -> None:
    if len(payload) > limit:
        raise Rejected("too_large", f"{len(payload)} bytes > limit {limit}")


def looks_binary(data: bytes | str) -> bool:
    """Magic numbers of common binary formats, NUL bytes, or mostly control characters."""
    # surrogatepass: a lone surrogate (stripped later, ingest/process/text.py) must not make the check raise
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    head = raw[:4096]
    if any(head.startswith(magic) for magic in BINARY_MAGIC) or b"\x00" in head:
        return True
    if not head:
        return False
    control = sum(1 for byte in head if byte < 32 and byte not in (9, 10, 13))
    return control / len(head) > 0.05
