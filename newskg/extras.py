"""Optional parts of newskg installed as extras: `newskg[local]` (the servers `newskg services up` runs on one
machine) and `newskg[eval]` (evaluation plots). Production code never imports them at module level; whoever needs
one asks here and gets an error naming the extra to install when it is missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from newskg.core.errors import NewskgError


class MissingExtra(NewskgError, RuntimeError):
    """An optional package is not installed: the message names the extra that brings it."""

    REASON = "missing_extra"


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import `module`, part of the `extra` extra, or raise MissingExtra saying what needs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(
            f"{purpose} needs the `{extra}` extra ({module} is not installed): "
            f"pip install 'newskg[{extra}]', or `make setup` in a checkout"
        ) from exc
