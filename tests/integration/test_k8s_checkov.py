"""checkov's Kubernetes policies pass on both rendered overlays, every skip justified in place (a
`checkov.io/skipN: CHECK=why` annotation). checkov runs from its own venv (`.venv-checkov`, made by `make setup`),
offline (`--skip-download`). It needs no server; it lives here because only the full setup installs it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support.cli import REPO

CHECKOV = REPO / ".venv-checkov" / "bin" / "checkov"
K8S = REPO / "k8s"


def checkov_summary(manifest: Path) -> dict[str, object]:
    assert CHECKOV.exists(), f"{CHECKOV} is missing: run `make setup` (scripts/setup_checkov.sh)"
    out = subprocess.run(
        [str(CHECKOV), "-f", str(manifest), "--framework", "kubernetes", "-o", "json", "--quiet", "--skip-download"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(out.stdout)
    report = report[0] if isinstance(report, list) else report
    failed = [(c["check_id"], c["resource"]) for c in report.get("results", {}).get("failed_checks", [])]
    assert not failed, failed
    return report["summary"]


@pytest.mark.parametrize("overlay", sorted(p.name for p in (K8S / "overlays").iterdir()))
def test_checkov_passes_on_the_rendered_overlay_with_every_skip_justified(overlay: str, tmp_path: Path):
    text = subprocess.run(
        ["kubectl", "kustomize", str(K8S / "overlays" / overlay)], capture_output=True, text=True, check=True
    ).stdout
    objects = [doc for doc in yaml.safe_load_all(text) if doc]
    manifest = tmp_path / f"{overlay}.yaml"
    manifest.write_text(text)
    summary = checkov_summary(manifest)
    assert summary["failed"] == 0 and summary["parsing_errors"] == 0
    # checkov counts resources its own way (52 for 45 dev objects), so only that it read them all is checked
    assert summary["passed"] > 500 and summary["resource_count"] >= len(objects)
    skip_notes = [
        (key, value)
        for doc in objects
        for key, value in (doc.get("metadata", {}).get("annotations") or {}).items()
        if key.startswith("checkov.io/skip")
    ]
    assert all("=" in value and len(value.split("=", 1)[1].strip()) > 10 for _, value in skip_notes), skip_notes
    # Every annotation skips a check checkov runs on that object: none is inert (the probe checks CKV_K8S_8/9 do
    # not apply to Jobs and CronJobs, so skips of them there were noise).
    assert summary["skipped"] == len(skip_notes), (summary["skipped"], skip_notes)
