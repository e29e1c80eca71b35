"""The one root of the project's errors: a caller can catch `NewskgError` and always find a `reason` code.

Dead-letter reason codes (README "Dead letters") are such codes: a dead letter is built from an error that
carries one (see `ingest.kafka.stage.dead_letter`)."""

from typing import ClassVar


class NewskgError(Exception):
    """An expected failure of newskg: `reason` is a stable, machine-readable code, the message says why.

    Each subclass names its usual code in `REASON`; one raised for a specific case (a dead letter's reason)
    passes `reason=` instead."""

    REASON: ClassVar[str] = "newskg_error"
    # True: not this input's fault and not an outage, so a stage must stop rather than dead-letter it (the LLM call
    # budget spent): core/failures.py classifies every NewskgError by this.
    STOPS: ClassVar[bool] = False

    def __init__(self, message: str = "", *, reason: str | None = None):
        super().__init__(message)
        self.reason = reason or self.REASON
