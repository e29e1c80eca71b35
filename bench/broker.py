"""Local Kafka-protocol brokers side by side: noida-db (keeps data) against Tansu (memory only).

Prints start-up time, produce and consume rates (acks=all, 1 KB values, 3 partitions), consumer-group join time,
and whether acknowledged messages survive a kill -9 and restart. Run: `make bench` or
`.venv/bin/python -m bench.broker [--messages N]`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.figures import Figure, emit, figure
from newskg.core.settings import Settings
from newskg.ingest.kafka.admin import TopicAdmin
from newskg.ingest.kafka.consumer import GroupConsumer
from newskg.ingest.kafka.producer import RecordProducer
from newskg.services.manager import ServiceManager
from newskg.wiring import kafka_options


def measure(engine: str, messages: int) -> dict:
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix=f"bench-{engine}-")), local_broker=engine, _env_file=None)
    manager = ServiceManager(settings)
    t0 = time.perf_counter()
    manager.up(only={"broker"})
    startup = time.perf_counter() - t0
    options = kafka_options(settings)
    topic = f"bench-{uuid.uuid4().hex[:6]}"
    TopicAdmin(options).ensure_topics([topic], partitions=3)
    producer = RecordProducer(options)
    value = b"x" * 1024
    t0 = time.perf_counter()
    for i in range(messages):
        producer.send(topic, f"k{i}", value)
    producer.flush()
    produce_rate = messages / (time.perf_counter() - t0)

    consumer = GroupConsumer(options, f"g-{topic}", [topic], max_poll_records=2000)
    t0, joined, got = time.perf_counter(), None, 0
    while got < messages:
        batch = consumer.poll(500)
        if batch and joined is None:
            joined = time.perf_counter()
        got += len(batch)
        consumer.commit(batch)
    consume_rate = messages / (time.perf_counter() - joined)
    join_s = joined - t0
    consumer.close()
    producer.close()

    manager.kill("broker")
    t0 = time.perf_counter()
    manager.up(only={"broker"})
    restart = time.perf_counter() - t0
    admin = TopicAdmin(kafka_options(settings))
    kept = sum(admin.end_offsets(topic).values()) if topic in admin._admin.list_topics() else 0
    admin.close()
    manager.down()
    return {
        "engine": engine,
        "startup_s": startup,
        "produce_per_s": produce_rate,
        "join_s": join_s,
        "consume_per_s": consume_rate,
        "restart_s": restart,
        "kept_after_kill9": kept,
        "sent": messages,
    }


def figures(noida: dict, tansu: dict) -> dict[str, Figure]:
    """noida-db's figures, Tansu's (memory only) as the baseline of the same run."""
    sent = noida["sent"]
    return {
        "broker_produce_per_s": figure(round(noida["produce_per_s"]), "msg/s (noida)", round(tansu["produce_per_s"])),
        "broker_consume_per_s": figure(round(noida["consume_per_s"]), "msg/s (noida)", round(tansu["consume_per_s"])),
        "broker_startup_s": figure(round(noida["startup_s"], 2), "s (noida)", round(tansu["startup_s"], 2)),
        "broker_group_join_s": figure(round(noida["join_s"], 2), "s (noida)", round(tansu["join_s"], 2)),
        "broker_restart_s": figure(round(noida["restart_s"], 2), "s (noida)", round(tansu["restart_s"], 2)),
        "broker_kept_after_kill9": figure(noida["kept_after_kill9"], f"of {sent} acknowledged (noida)", sent),
        "broker_tansu_kept_after_kill9": figure(tansu["kept_after_kill9"], f"of {sent} acknowledged (tansu)", sent),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure (tables on stderr)")
    args = parser.parse_args()
    rows = [measure(engine, args.messages) for engine in ("noida", "tansu")]
    if args.json:
        emit(figures(*rows), " ".join(["python -m bench.broker", *sys.argv[1:]]))
    table = Table(title=f"local brokers, {args.messages} x 1 KB messages, acks=all, 3 partitions")
    for column in (
        "engine",
        "start s",
        "produce msg/s",
        "group join s",
        "consume msg/s",
        "restart s",
        "kept after kill -9",
    ):
        table.add_column(column)
    for r in rows:
        table.add_row(
            r["engine"],
            f"{r['startup_s']:.2f}",
            f"{r['produce_per_s']:.0f}",
            f"{r['join_s']:.1f}",
            f"{r['consume_per_s']:.0f}",
            f"{r['restart_s']:.2f}",
            f"{r['kept_after_kill9']}/{r['sent']}",
        )
    console = Console(width=120, stderr=args.json)
    console.print(table)
    noida, tansu = rows
    console.print(
        f"noida/tansu ratios: produce {noida['produce_per_s'] / tansu['produce_per_s']:.2f}x, "
        f"consume {noida['consume_per_s'] / tansu['consume_per_s']:.2f}x"
    )


if __name__ == "__main__":
    main()
