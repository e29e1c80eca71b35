"""The `evidence` answerer's corpus: a user's folder of documents (e.g. the Wikipedia pages of FanOutQA's
open-book setting) ingested through the normal pipeline — `newskg ingest files` into Kafka, `newskg run all
--until-idle` into a graph and mirror — but into a separate graph database, topics and Qdrant folder named
after the folder, so the news graph is never touched. Documents are dated `as_of` and ingested as published
(`--backfill`), so the questions, asked as of that day, see them."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from newskg.core.errors import NewskgError
from newskg.core.settings import Settings


class DocsError(NewskgError, RuntimeError):
    REASON = "fanoutqa_docs_failed"


def corpus_name(docs: Path) -> str:
    return "fanoutqa_docs_" + hashlib.sha256(str(docs.resolve()).encode()).hexdigest()[:10]


def docs_settings(settings: Settings, docs: Path) -> Settings:
    name = corpus_name(docs)
    return settings.model_copy(
        update={
            "graph_database": name,
            "qdrant_path": settings.data_dir / name / "qdrant",
            **{f"topic_{k}": f"{name}.{k}" for k in ("articles", "chunks", "dlq", "dedup")},
        }
    )


def docs_env(settings: Settings, docs: Path) -> dict[str, str]:
    own = docs_settings(settings, docs)
    env = {k: v for k, v in os.environ.items()}
    env.update(
        {
            "NEWSKG_DATA_DIR": str(settings.data_dir),
            "NEWSKG_GRAPH_DATABASE": str(own.graph_database),
            "NEWSKG_QDRANT_PATH": str(own.qdrant_path),
            **{f"NEWSKG_TOPIC_{k.upper()}": getattr(own, f"topic_{k}") for k in ("articles", "chunks", "dlq", "dedup")},
        }
    )
    return env


def ingest_docs(settings: Settings, docs: Path, as_of: str) -> Settings:
    """Build (or top up: ingestion is idempotent) the folder's graph; the settings that point at it."""
    if not docs.is_dir():
        raise DocsError(f"--docs {docs}: not a folder", reason="fanoutqa_docs_missing")
    env = docs_env(settings, docs)
    for args in (
        ["ingest", "files", str(docs), "--date", as_of, "--backfill", "--json"],
        ["run", "all", "--until-idle", "--json"],
    ):
        proc = subprocess.run([sys.executable, "-m", "newskg", *args], env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise DocsError(f"newskg {' '.join(args[:2])} failed on {docs}: {proc.stderr.strip()[-500:]}")
    return docs_settings(settings, docs)
