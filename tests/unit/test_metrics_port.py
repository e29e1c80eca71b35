"""Prometheus scrapes the API without its key on a separate metrics port (`NEWSKG_API_METRICS_PORT`), while /metrics
on the API port stays behind the key; the Kafka client trusts a private CA when `NEWSKG_KAFKA_SSL_CAFILE` is set
(Strimzi's cluster CA): the two things a pod on a cluster needed that the code did not have."""

from __future__ import annotations

import httpx
from fastapi.testclient import TestClient

from newskg.core.settings import Settings
from newskg.ingest.kafka.options import client_options
from newskg.qa.api import create_app, serve_metrics

KEY = "k-secret-1"


def test_metrics_port_serves_the_api_series_without_a_key():
    app = create_app(None, {}, api_keys=[KEY])  # no route used here reaches the service
    api = TestClient(app)
    assert api.get("/healthz").status_code == 200
    assert api.get("/v1/entities", params={"search": "x"}).status_code == 401
    assert api.get("/metrics").status_code == 401  # the API port keeps its key
    metrics = serve_metrics(app, "127.0.0.1", 0)
    try:
        scraped = httpx.get(f"http://127.0.0.1:{metrics.port}/metrics", timeout=5)
    finally:
        metrics.close()
    assert scraped.status_code == 200
    assert 'newskg_http_requests_total{path="/healthz",status="200"} 1.0' in scraped.text
    assert 'newskg_http_requests_total{path="/v1/entities",status="401"} 1.0' in scraped.text


def test_metrics_port_setting_is_off_by_default_and_read_from_env(monkeypatch):
    assert Settings(_env_file=None).api_metrics_port is None
    monkeypatch.setenv("NEWSKG_API_METRICS_PORT", "9100")
    assert Settings(_env_file=None).api_metrics_port == 9100


def test_kafka_client_trusts_the_configured_ca(tmp_path, monkeypatch):
    plain = client_options(Settings(_env_file=None), "k:9093")
    assert "ssl_cafile" not in plain
    ca = tmp_path / "ca.crt"
    monkeypatch.setenv("NEWSKG_KAFKA_SECURITY_PROTOCOL", "SASL_SSL")
    monkeypatch.setenv("NEWSKG_KAFKA_SSL_CAFILE", str(ca))
    options = client_options(Settings(_env_file=None), "k:9093")
    assert options["ssl_cafile"] == str(ca)
    assert options["security_protocol"] == "SASL_SSL"
