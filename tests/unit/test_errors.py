"""One error root: every project error is a NewskgError with a reason code, so a caller can catch one thing."""

import importlib
import inspect
from pathlib import Path

import pytest

from newskg.core.errors import NewskgError
from newskg.core.llm.client import BudgetExceeded
from newskg.core.records import RecordError, decode_any
from newskg.wiring import NotConfigured

ROOT = Path(__file__).resolve().parents[2]


def project_modules() -> list[str]:
    """Every module of the project (all inside the one package, newskg; the top-level core/, … are links to its
    layers), found from the files (some folders are namespace packages, which pkgutil does not walk); `__main__` is
    left out: importing it would start the CLI."""
    names = []
    for path in sorted((ROOT / "newskg").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__main__":
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def project_exception_classes() -> list[type[BaseException]]:
    """Every exception class defined in a project module."""
    found: dict[str, type[BaseException]] = {}
    for name in project_modules():
        module = importlib.import_module(name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == module.__name__:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return list(found.values())


def test_every_project_error_derives_from_the_root_and_has_a_reason():
    classes = project_exception_classes()
    names = {cls.__name__ for cls in classes}
    assert {"RecordError", "Rejected", "FetchRefused", "BudgetExceeded", "NotConfigured", "ServiceError"} <= names
    for cls in classes:
        assert issubclass(cls, NewskgError), f"{cls.__module__}.{cls.__name__} does not derive from NewskgError"
        assert isinstance(cls.REASON, str) and cls.REASON, f"{cls.__name__} has no reason code"


def test_one_except_catches_budget_record_and_configuration_errors():
    def invalid_record():
        decode_any(b"{not json")

    def budget_spent():
        raise BudgetExceeded("LLM budget of 0 calls spent")

    def no_broker():
        raise NotConfigured("no Kafka broker")

    for fail, expected in [(invalid_record, RecordError), (budget_spent, BudgetExceeded), (no_broker, NotConfigured)]:
        with pytest.raises(NewskgError) as caught:
            fail()
        assert isinstance(caught.value, expected)
        assert caught.value.reason and str(caught.value)


def test_a_record_error_keeps_its_dead_letter_reason_and_its_old_base():
    with pytest.raises(ValueError) as caught:
        decode_any(b"{not json")
    assert caught.value.reason == "malformed_json"
