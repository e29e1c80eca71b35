"""`services up|down|status`: idempotent start, health check and stop of the local servers.

A server whose `NEWSKG_*` setting points elsewhere is external: it is health-checked, never started or stopped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from newskg.core.errors import NewskgError
from newskg.core.settings import Settings
from newskg.core.timeaxes import iso, utc_now
from newskg.services import process
from newskg.services.servers import (
    FalkorDBServer,
    LlamaCppServer,
    NoidaBroker,
    ServerSpec,
    TansuBroker,
    http_ok,
    kafka_healthy,
)
from newskg.services.state import ServiceRecord, ServiceState

log = logging.getLogger(__name__)


class ServiceError(NewskgError, RuntimeError):
    """A local server that cannot be started, stopped or reached: the message says which and why."""

    REASON = "service_error"


@dataclass
class ServiceStatus:
    name: str
    engine: str
    address: str
    managed: bool
    running: bool
    healthy: bool
    pid: int | None = None
    log: str | None = None

    @property
    def mode(self) -> str:
        if self.managed:
            return "local" if self.pid else "not started"
        return "in-process" if self.engine in ("qdrant-edge", "qdrant-local") else "external"

    def as_dict(self) -> dict[str, Any]:  # the JSON row of `services status --json`
        return {**self.__dict__, "mode": self.mode}


class ServiceManager:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.state = ServiceState(settings.services_dir)

    # --- which servers are ours to run
    def specs(self, llm: bool = False, bolt: bool = False) -> list[ServerSpec]:
        specs: list[ServerSpec] = []
        if not self.settings.kafka_bootstrap:
            specs.append(NoidaBroker() if self.settings.local_broker == "noida" else TansuBroker())
        if not self.settings.graph_uri:
            specs.append(FalkorDBServer(bolt=bolt))
        if llm and not self.settings.llm_base_url:
            specs.append(LlamaCppServer(model_alias=self.settings.llm_model))
        return specs

    def up(self, llm: bool = False, bolt: bool = False, only: set[str] | None = None) -> list[ServiceStatus]:
        chosen = [spec for spec in self.specs(llm=llm, bolt=bolt) if not only or spec.name in only]
        for spec in chosen:
            spec.require_installed()
        with self.state.lock():
            records = self.state.load()
            for spec in chosen:
                current = records.get(spec.name)
                if current and self._running(current):
                    if current.engine == spec.engine and set(spec.extra_port_names()) <= set(current.extra_ports):
                        continue  # idempotent: already up as asked
                    process.terminate(current.pid, current.marker)  # restart with the ports now asked for
                records[spec.name] = self._start(spec)
                self.state.save(records)
        return self.status()

    def down(self, only: set[str] | None = None) -> list[ServiceStatus]:
        with self.state.lock():
            records = self.state.load()
            for name in list(records):
                if only and name not in only:
                    continue
                rec = records.pop(name)
                if self._running(rec) and (spec := _spec_of(rec)) is not None:
                    _before_stop(spec, rec)
                process.terminate(rec.pid, rec.marker)
            self.state.save(records)
        return self.status()

    def kill(self, name: str) -> None:
        """kill -9 one managed server (crash tests); `up` starts it again on the same data."""
        rec = self.state.load().get(name)
        if rec:
            process.kill_hard(rec.pid, rec.marker)

    def status(self) -> list[ServiceStatus]:
        records = self.state.load()
        return [
            self._broker_status(records),
            self._graph_status(records),
            self._mirror_status(),
            self._llm_status(records),
        ]

    # --- internals
    def _running(self, rec: ServiceRecord) -> bool:
        return process.is_alive(rec.pid, rec.marker)

    def _start(self, spec: ServerSpec) -> ServiceRecord:
        remembered = self.state.remembered_ports()
        key = f"{spec.name}.{spec.engine}"
        port = _stable_port(key, remembered)
        extra = {n: _stable_port(f"{key}.{n}", remembered, spec.port_bound(n)) for n in spec.extra_port_names()}
        data_dir = (self.settings.services_dir / spec.name / spec.engine).resolve()
        data_dir.mkdir(parents=True, exist_ok=True)
        log = data_dir / "server.log"
        pid = process.spawn(spec.command(port, data_dir, extra), log, cwd=data_dir)
        ok = process.wait_until(
            lambda: spec.healthy("127.0.0.1", port) or not process.is_alive(pid, spec.marker),
            spec.start_timeout_s,
            interval_s=0.2,
        )
        if not (ok and process.is_alive(pid, spec.marker)):
            process.terminate(pid, spec.marker)
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise ServiceError(f"{spec.name} ({spec.engine}) did not become healthy on port {port}:\n{tail}")
        self.state.remember_port(f"{spec.name}.{spec.engine}", port)
        for name, extra_port in extra.items():
            self.state.remember_port(f"{spec.name}.{spec.engine}.{name}", extra_port)
        return ServiceRecord(
            name=spec.name,
            engine=spec.engine,
            pid=pid,
            port=port,
            extra_ports=extra,
            address=spec.address("127.0.0.1", port),
            marker=spec.marker,
            data_dir=str(data_dir),
            log=str(log),
            started_at=iso(utc_now()),
        )

    def _managed_status(
        self, name: str, records: dict[str, ServiceRecord], spec_health: Callable[[ServiceRecord], bool]
    ) -> ServiceStatus:
        rec = records.get(name)
        if rec is None:
            return ServiceStatus(name, "-", "-", managed=True, running=False, healthy=False)
        running = self._running(rec)
        return ServiceStatus(
            name,
            rec.engine,
            rec.address,
            managed=True,
            running=running,
            healthy=running and spec_health(rec),
            pid=rec.pid,
            log=rec.log,
        )

    def _broker_status(self, records: dict[str, ServiceRecord]) -> ServiceStatus:
        if self.settings.kafka_bootstrap:
            healthy = kafka_healthy(self.settings.kafka_bootstrap) if _plaintext(self.settings) else True
            return ServiceStatus("broker", "external", self.settings.kafka_bootstrap, False, healthy, healthy)
        return self._managed_status("broker", records, lambda r: kafka_healthy(f"{r.host}:{r.port}"))

    def _graph_status(self, records: dict[str, ServiceRecord]) -> ServiceStatus:
        if self.settings.graph_uri:
            from newskg.graph.connection import connect_graph

            try:
                with connect_graph(self.settings.graph_uri, self.settings) as conn:
                    healthy = conn.ping()
            except Exception:
                healthy = False
            return ServiceStatus("graph", "external", self.settings.graph_uri, False, healthy, healthy)
        return self._managed_status("graph", records, lambda r: FalkorDBServer().healthy(r.host, r.port))

    def _mirror_status(self) -> ServiceStatus:
        if self.settings.qdrant_url:
            key = self.settings.qdrant_api_key
            headers = {"api-key": key.get_secret_value()} if key else None
            healthy = http_ok(self.settings.qdrant_url.rstrip("/") + "/collections", headers)
            return ServiceStatus("mirror", "qdrant-server", self.settings.qdrant_url, False, healthy, healthy)
        # The embedded mirror is a folder opened in-process (one process at a time): nothing to start or probe.
        path = Path(self.settings.qdrant_local_path).resolve()
        engine = "qdrant-edge" if self.settings.mirror_engine == "edge" else "qdrant-local"
        return ServiceStatus("mirror", engine, str(path), False, True, True)

    def _llm_status(self, records: dict[str, ServiceRecord]) -> ServiceStatus:
        if self.settings.llm_base_url:
            key = self.settings.llm_api_key
            headers = {"Authorization": f"Bearer {key.get_secret_value()}"} if key else None
            healthy = http_ok(self.settings.llm_base_url.rstrip("/") + "/models", headers)
            return ServiceStatus("llm", "external", self.settings.llm_base_url, False, healthy, healthy)
        return self._managed_status("llm", records, lambda r: LlamaCppServer().healthy(r.host, r.port))


def _before_stop(spec: ServerSpec, rec: ServiceRecord) -> None:
    try:
        spec.before_stop(rec.host, rec.port)
    except Exception as exc:  # the stop itself must happen whatever the courtesy before it did
        log.warning("%s (%s): before stopping: %s", rec.name, rec.engine, exc)


def _spec_of(rec: ServiceRecord) -> ServerSpec | None:
    specs: list[ServerSpec] = [NoidaBroker(), TansuBroker(), FalkorDBServer(), LlamaCppServer()]
    return next((spec for spec in specs if spec.name == rec.name and spec.engine == rec.engine), None)


def _plaintext(settings: Settings) -> bool:
    # The quick probe speaks plaintext only; secured clusters are checked by the real clients.
    return settings.kafka_security_protocol == "PLAINTEXT"


# How long a server's port of last time is waited for before another is taken.
PORT_WAIT_S = 10.0


def _stable_port(key: str, remembered: Mapping[str, int], below: int | None = None) -> int:
    """The port used last time (a server's own or an extra one, e.g. FalkorDB's bolt), waited for while something
    holds it: a server killed a moment ago, or a client's outgoing connection, which takes its local port from the
    same ephemeral range. Clients that know the old address cannot follow a server that moved (a broker restarted
    on another port left every consumer polling a closed port for ever: tests/integration/test_producer_restart.py),
    so a move is logged. `below`: process.free_port's bound, which a remembered port over it gives way to."""
    wanted = remembered.get(key)
    if wanted is None or (below is not None and wanted > below):
        return process.free_port(below=below)
    if process.wait_until(lambda: process.free_port(wanted, below) == wanted, PORT_WAIT_S, interval_s=0.2):
        return wanted
    port = process.free_port(wanted, below)
    log.warning(
        "%s: port %d still in use after %.0f s; starting on %d (clients that know port %d will not reach it)",
        key,
        wanted,
        PORT_WAIT_S,
        port,
        wanted,
    )
    return port
