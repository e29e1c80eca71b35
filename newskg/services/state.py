"""What `services up` started: one JSON file under the data dir that every other command reads."""

from __future__ import annotations

import json
from pathlib import Path

from filelock import FileLock
from pydantic import BaseModel


class ServiceRecord(BaseModel):
    name: str
    engine: str
    pid: int
    host: str = "127.0.0.1"
    port: int
    extra_ports: dict[str, int] = {}
    address: str
    marker: str
    data_dir: str
    log: str
    started_at: str


class ServiceState:
    def __init__(self, services_dir: Path):
        self.dir = services_dir
        self.path = services_dir / "state.json"
        self.ports_path = services_dir / "ports.json"

    def lock(self) -> FileLock:
        self.dir.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.dir / ".lock"), timeout=600)

    def load(self) -> dict[str, ServiceRecord]:
        if not self.path.exists():
            return {}
        raw = json.loads(self.path.read_text())
        return {name: ServiceRecord.model_validate(rec) for name, rec in raw.items()}

    def save(self, records: dict[str, ServiceRecord]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({n: r.model_dump() for n, r in records.items()}, indent=2))
        tmp.replace(self.path)

    def remembered_ports(self) -> dict[str, int]:
        """Ports used last time: reused when free so addresses stay stable across down/up."""
        return json.loads(self.ports_path.read_text()) if self.ports_path.exists() else {}

    def remember_port(self, key: str, port: int) -> None:
        ports = self.remembered_ports() | {key: port}
        self.dir.mkdir(parents=True, exist_ok=True)
        self.ports_path.write_text(json.dumps(ports, indent=2))
