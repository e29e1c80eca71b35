"""Client options shared by producers, consumers and the admin client: one place for bootstrap and security."""

from __future__ import annotations

from typing import Any

from newskg.core.settings import Settings


def client_options(settings: Settings, bootstrap: str) -> dict[str, Any]:
    options: dict[str, Any] = {
        "bootstrap_servers": bootstrap.split(","),
        "security_protocol": settings.kafka_security_protocol,
        "client_id": "newskg",
    }
    if settings.kafka_sasl_mechanism:
        options["sasl_mechanism"] = settings.kafka_sasl_mechanism
        options["sasl_plain_username"] = settings.kafka_sasl_username
        if settings.kafka_sasl_password:
            options["sasl_plain_password"] = settings.kafka_sasl_password.get_secret_value()
    if settings.kafka_ssl_cafile:  # a private CA (Strimzi's cluster CA): the default trust store would refuse it
        options["ssl_cafile"] = str(settings.kafka_ssl_cafile)
    return options
