"""A server out of reach ends a CLI command with one line naming it and its address, exit code 1, no traceback
(the real broker stopped under the CLI: tests/chaos/test_outages.py)."""

import pytest
import redis.exceptions
import typer

from newskg.cli.app import NewskgTyper
from newskg.core.settings import get_settings
from newskg.ingest.kafka.client import KafkaTimeoutError


@pytest.fixture
def configured(monkeypatch):
    monkeypatch.setenv("NEWSKG_KAFKA_BOOTSTRAP", "10.1.2.3:9092")
    monkeypatch.setenv("NEWSKG_GRAPH_URI", "falkor://10.1.2.4:6379")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def _failing(error: Exception) -> typer.Typer:
    app = NewskgTyper()

    @app.command()
    def produce() -> None:
        raise error

    return app


@pytest.mark.parametrize(
    ("error", "named"),
    [
        (KafkaTimeoutError("Unable to bootstrap from ['10.1.2.3:9092']"), "the Kafka broker at 10.1.2.3:9092"),
        (redis.exceptions.ConnectionError("Connection refused"), "the graph server at falkor://10.1.2.4:6379"),
    ],
)
def test_an_unreachable_server_is_one_line_naming_it_and_exit_1(configured, capsys, error, named):
    with pytest.raises(SystemExit) as exited:
        _failing(error)([], standalone_mode=True)
    assert exited.value.code == 1
    err = capsys.readouterr().err  # one line, unwrapped (newskg/cli/output.err_console)
    assert named in err and "is out of reach" in err and "Traceback" not in err


def test_any_other_error_is_not_dressed_up(configured):
    with pytest.raises(ValueError):
        _failing(ValueError("a bug"))([], standalone_mode=True)


def test_the_broker_probe_answers_false_at_once_when_nothing_listens():
    """`/readyz` and `services status` probe the broker: a broker that is down must not hang them (kafka-python
    alone spends a minute or more trying to bootstrap)."""
    import socket
    import time

    from newskg.services.servers import kafka_healthy

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed when the block ends: nothing listens there
    started = time.monotonic()
    assert kafka_healthy(f"127.0.0.1:{port}") is False
    assert time.monotonic() - started < 5
