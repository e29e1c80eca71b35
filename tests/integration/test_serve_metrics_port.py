"""`newskg serve` itself starts the unauthenticated metrics port from `NEWSKG_API_METRICS_PORT` (the Prometheus
scrape target of k8s/base/api.yaml), while /metrics on the API port stays behind the key. The unit test
(tests/unit/test_metrics_port.py) proves `serve_metrics`; this one proves the CLI wires it from the setting."""

import os
import signal

import httpx
import pytest

from newskg.services.process import free_port
from tests.support.processes import serve_process, wait_for

pytestmark = pytest.mark.integration

KEY = "k-metrics-1"


def test_serve_exposes_metrics_without_a_key_on_the_configured_port(isolated):
    api_port, metrics_port = free_port(), free_port()
    env = isolated.env | {"NEWSKG_API_KEYS": f'["{KEY}"]', "NEWSKG_API_METRICS_PORT": str(metrics_port)}
    server = serve_process(env, api_port)
    api, metrics = f"http://127.0.0.1:{api_port}", f"http://127.0.0.1:{metrics_port}"
    try:
        wait_for(lambda: httpx.get(api + "/healthz", timeout=5).status_code == 200, 180, server)
        scraped = httpx.get(metrics + "/metrics", timeout=5)  # no key
        assert scraped.status_code == 200, scraped.text
        assert scraped.headers["content-type"].startswith("text/plain")
        # The API's own series, counting the /healthz request above: the same registry, not an empty exporter.
        assert 'newskg_http_requests_total{path="/healthz",status="200"}' in scraped.text
        assert httpx.get(api + "/metrics", timeout=5).status_code == 401  # the API port keeps its key
        keyed = httpx.get(api + "/metrics", headers={"X-API-Key": KEY}, timeout=5)
        assert keyed.status_code == 200 and "newskg_http_requests_total" in keyed.text
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        output = server.communicate(timeout=60)[0]
    assert f"metrics without a key on port {metrics_port}" in output, output
