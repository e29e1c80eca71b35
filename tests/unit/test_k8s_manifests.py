"""The Kubernetes manifests (k8s/): every overlay renders with `kubectl kustomize`, every built-in object validates
against the Kubernetes schema (kubernetes-validate, strict), the Strimzi and KEDA resources are checked
structurally against what the code expects (topic names, compaction, partitions >= replicas of the group reading
them, the consumer groups, the Kafka user and its Secrets), every NEWSKG_* variable the manifests set is a setting
and the settings each component needs are set, ports and probe paths match the app, and the pods keep the
security rules checkov enforces (checked here without checkov, which cannot share this venv: see k8s/README.md).

kubectl (with its built-in kustomize) is part of this machine image (Debian package `kubectl`); it renders
offline."""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from newskg.core.settings import Settings
from newskg.qa.api import OPEN_PATHS, create_app

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "k8s"
OVERLAYS = ("dev", "prod")
NAMESPACE = "newskg"
KUBERNETES_VERSIONS = ("1.30.0", "1.37.0")  # the oldest we support and the newest the schemas cover
CUSTOM_KINDS = {
    "kafka.strimzi.io/v1beta2": {"Kafka", "KafkaNodePool", "KafkaTopic", "KafkaUser"},
    "keda.sh/v1alpha1": {"ScaledObject", "TriggerAuthentication"},
}
WORKLOADS = {"Deployment", "StatefulSet", "Job", "CronJob"}
STAGE_TOPIC = {"process": "topic_articles", "extract": "topic_chunks"}  # what each consumer group reads
# The settings a component cannot run without on a cluster (empty would mean "start a local server" or local
# Qdrant mode, which a pod cannot do), by the command its container runs.
KAFKA = {
    "kafka_bootstrap",
    "kafka_security_protocol",
    "kafka_sasl_mechanism",
    "kafka_sasl_username",
    "kafka_sasl_password",
    "kafka_ssl_cafile",
}
GRAPH = {"graph_uri", "graph_user", "graph_password"}
VECTORS = {"qdrant_url", "qdrant_api_key"}
LLM = {"llm_base_url", "llm_model"}
# The components that open the mirror embed text with the local MiniLM: its threads follow the pod's CPU limit (the
# API's are NEWSKG_API_EMBED_THREADS, 1 by default: DEFAULT_ON_A_CLUSTER).
EMBEDS = {"embed_threads"}
REQUIRED = {
    ("run", "process"): KAFKA | {"instance_id"},
    ("run", "extract"): KAFKA | GRAPH | VECTORS | LLM | EMBEDS | {"instance_id", "data_dir", "extract_variant"},
    ("serve",): KAFKA | GRAPH | VECTORS | LLM | {"data_dir", "api_host", "api_port", "api_metrics_port", "api_keys"},
    ("ingest", "feeds"): KAFKA | {"data_dir"},
    ("graph", "init"): GRAPH,
    ("graph", "reconcile"): GRAPH | VECTORS | EMBEDS | {"data_dir"},
}
TOPICS_ARE_DEFAULTS = "the KafkaTopics carry the default names (test_topics_are_the_settings_topics_with_the_...)"
# Every setting no manifest sets, and why its default is right on a cluster (or why no pod reads it). A new setting
# must be set in k8s/ or land here with a reason (test_every_setting_is_set_on_the_cluster_or_its_default_justified).
DEFAULT_ON_A_CLUSTER = {
    "local_broker": "dev only: the broker `newskg services up` starts; pods reach Strimzi via NEWSKG_KAFKA_BOOTSTRAP",
    "group_prefix": "one deployment per namespace: the groups newskg-process/-extract match the KafkaUser ACLs",
    "kafka_max_poll_interval_s": "180 s: a 64-chunk M1 batch makes ~15 LLM calls, 4 in flight, far under it",
    "kafka_join_timeout_s": "only `run --until-idle` exits on it; long-running pods log a warning and keep waiting",
    "embed_cache_size": "8192 distinct texts, about 25 MB per process: well inside every pod's memory limit",
    "extract_m0_rules": "wide: the rules whose replay recall and fact precision the README states; strict is a "
    "deployment's choice of fewer, more precise facts",
    "extract_ingestion_order": "on: each extract replica hands its own partitions' chunks on in ingestion order, "
    "which costs a buffer of at most 256 records a partition",
    "extract_min_confidence": "0: every fact written with its confidence shown; a floor trades replay recall for "
    "precision (README, Fact confidence), a deployment's choice",
    "topic_articles": TOPICS_ARE_DEFAULTS,
    "topic_chunks": TOPICS_ARE_DEFAULTS,
    "topic_dlq": TOPICS_ARE_DEFAULTS,
    "topic_dedup": TOPICS_ARE_DEFAULTS,
    "topic_linking": TOPICS_ARE_DEFAULTS,
    "chunk_sentences": "the chunking the evaluations measured (m=5, as NEON); changing it changes chunk ids",
    "chunk_stride": "the chunking the evaluations measured (s=3); changing it changes chunk ids",
    "dedup_threshold": "the near-duplicate threshold the dedup evaluation measured (Jaccard 0.7)",
    "dedup_num_perm": "128 permutations: the measured memory per signature (README capacity table) assumes it",
    "dedup_window_days": "30 days fit a process pod's memory to ~10k articles/day; shorter beyond (README Scaling)",
    "max_page_bytes": "5 MB, below every topic's max.message.bytes (test_topics_are_the_settings_topics_...)",
    "process_batch_size": "64 per poll: the batch the throughput figures and the dedup propagation window assume",
    "fetch_timeout_s": "20 s per feed or page fetch is fine for public news sites",
    "fetch_min_interval_s": "1 s between requests to one domain: politeness, one feeds replica",
    "fetch_user_agent": "the project's identifying User-Agent; a deployment may brand it but needs not",
    "fetch_allow_private": "must stay false on a cluster: true lets a feed reach in-cluster addresses (SSRF)",
    "fetch_max_redirects": "5 redirect hops are enough for news sites and bound redirect loops",
    "graph_database": "the Neo4j server's home database (Aura and a community server have one)",
    "qdrant_path": "the embedded mirror only; pods use the Qdrant server at NEWSKG_QDRANT_URL",
    "mirror_engine": "the embedded mirror only; pods use the Qdrant server at NEWSKG_QDRANT_URL",
    "mirror_index_after": "Qdrant Edge only; the server indexes on its own (its optimizers)",
    "llm_max_concurrency": "4 calls in flight per extract replica stay under a small account's rate limit",
    "llm_timeout_s": "120 s per call covers a slow hosted model; retries follow",
    "llm_max_tokens": "512 tokens bound one answer of the M1/M2/QA prompts, which need ~100",
    "llm_max_retries": "4 retries with backoff ride out 429s and 5xx of a hosted endpoint",
    "llm_cache": "on: the cache lives under NEWSKG_DATA_DIR, a volume in the pods that call the LLM",
    "llm_price_in_per_mtok": "cost accounting only: 0 reports tokens without dollars; prices change, none is shipped",
    "llm_price_out_per_mtok": "cost accounting only: 0 reports tokens without dollars; prices change, none is shipped",
    "extract_subjects": "empty: the top-N entities by mention TF-IDF, the design's default target selection",
    "extract_top_n": "50 target subjects by TF-IDF, the design's default",
    "extract_window_days": "a 7-day TF-IDF window, the design's default",
    "extract_m2_batch": "k=5 chunks per M2 prompt, as measured (README capacity table)",
    "extract_m2_max_wait_s": "a pair's remainder waits at most 10 min: fresh enough for an always-current graph",
    "extract_m2_max_tries": "3 tries of an unparseable M2 answer before the dead-letter topic",
    "extract_kb_path": "optional offline KB; none is shipped in the image",
    "embed_backend": "onnx: the ONNX MiniLM cached under NEWSKG_DATA_DIR (a volume), exported on first use if missing",
    "mirror_enabled": "on: the API's hybrid retrieval needs the mirror the extract replicas write",
    "embedding_model": "read only with NEWSKG_EMBEDDING_BACKEND=openai; the manifests use minilm",
    "qa_backoff_days": "7 days of temporal back-off, the design's default",
    "explore_spikes_file": "the explorer falls back to the rolling-sum rule; a NEON spike file is a local run",
    "neon_spike_window": "NEON evaluation only (`newskg eval spikes`, `eval replay`), which no pod runs",
    "neon_spike_sigma": "NEON evaluation only (`newskg eval spikes`, `eval replay`), which no pod runs",
    "neon_min_users": "NEON evaluation only (`newskg eval spikes`, `eval replay`), which no pod runs",
    "api_max_query_chars": "300 characters bound a query, as the API documents",
    "api_threads": "4 threads per API pod for graph/LLM calls; the HPA adds pods for more",
    "api_embed_threads": "1: the API embeds one query per request thread (cheaper per query than two, measured), "
    "so it stays within any pod's CPU limit; NEWSKG_EMBED_THREADS is not read by `serve`",
}
# Created outside the overlay in prod (from a secret store, k8s/README.md); `optional` ones may be absent.
EXTERNAL_SECRETS = {"newskg-neo4j", "newskg-qdrant", "newskg-api", "newskg-llm"}


@functools.cache
def rendered(overlay: str) -> tuple[dict[str, Any], ...]:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl is missing: it ships with this machine image (Debian package `kubectl`)"
    out = subprocess.run(
        [kubectl, "kustomize", str(K8S / "overlays" / overlay)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return tuple(doc for doc in yaml.safe_load_all(out.stdout) if doc)


def objects(overlay: str, kind: str) -> list[dict[str, Any]]:
    return [o for o in rendered(overlay) if o["kind"] == kind]


def one(overlay: str, kind: str, name: str) -> dict[str, Any]:
    found = [o for o in objects(overlay, kind) if o["metadata"]["name"] == name]
    assert len(found) == 1, f"{overlay}: {kind}/{name} found {len(found)} times"
    return found[0]


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    spec = workload["spec"]
    if workload["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    return spec["template"]["spec"]


def pod_labels(workload: dict[str, Any]) -> dict[str, str]:
    spec = workload["spec"]
    if workload["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    return spec["template"]["metadata"].get("labels", {})


def workloads(overlay: str) -> Iterator[dict[str, Any]]:
    return (o for o in rendered(overlay) if o["kind"] in WORKLOADS)


def newskg_containers(overlay: str) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(workload, container) for every container that runs the newskg image."""
    for workload in workloads(overlay):
        for container in pod_spec(workload)["containers"]:
            if re.search(r"(^|/)newskg:", container["image"]):
                yield workload, container


def config(overlay: str) -> dict[str, str]:
    return one(overlay, "ConfigMap", "newskg-config")["data"]


def container_env(overlay: str, container: dict[str, Any]) -> dict[str, str]:
    """The NEWSKG_* environment a container gets: its ConfigMaps, then its own variables (a secret or a field
    reference stands in as a placeholder value)."""
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        env |= one(overlay, "ConfigMap", source["configMapRef"]["name"])["data"]
    for var in container.get("env", []):
        source = var.get("valueFrom", {})
        if "resourceFieldRef" in source:  # what the kubelet puts there: the resource rounded up to the divisor
            env[var["name"]] = str(_resource_value(container, source["resourceFieldRef"]))
        else:
            env[var["name"]] = var.get("value", "placeholder-from-" + next(iter(source or {"x": 0})))
    if env.get("NEWSKG_API_KEYS", "").startswith("placeholder"):
        env["NEWSKG_API_KEYS"] = '["placeholder"]'
    return {k: v for k, v in env.items() if k.startswith("NEWSKG_")}


def _resource_value(container: dict[str, Any], ref: dict[str, str]) -> int:
    """A resourceFieldRef for CPU with divisor 1, as the kubelet resolves it: the quantity rounded up to a core."""
    bound, resource = ref["resource"].split(".")
    assert resource == "cpu" and ref.get("divisor", "1") == "1", ref
    quantity = str(container["resources"][bound][resource])
    millicores = int(quantity[:-1]) if quantity.endswith("m") else int(float(quantity) * 1000)
    return -(-millicores // 1000)


def command_of(container: dict[str, Any]) -> tuple[str, ...]:
    args = tuple(container["args"])
    return next(key for key in REQUIRED if args[: len(key)] == key)


def kafka_topics(overlay: str) -> dict[str, dict[str, Any]]:
    return {t["spec"]["topicName"]: t for t in objects(overlay, "KafkaTopic")}


# --- rendering and schemas


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_overlay_renders_into_one_namespace_with_unique_names(overlay):
    docs = rendered(overlay)
    assert docs
    keys = [(o["kind"], o["metadata"]["name"]) for o in docs]
    assert len(keys) == len(set(keys)), keys
    for o in docs:
        if o["kind"] != "Namespace":
            assert o["metadata"].get("namespace") == NAMESPACE, (o["kind"], o["metadata"]["name"])
    assert one(overlay, "Namespace", NAMESPACE)["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == (
        "restricted"
    )


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_builtin_object_validates_against_the_kubernetes_schema(overlay):
    custom = 0
    for o in rendered(overlay):
        if o["kind"] in CUSTOM_KINDS.get(o["apiVersion"], set()):
            custom += 1  # checked structurally below
            continue
        for version in KUBERNETES_VERSIONS:
            try:
                kubernetes_validate.validate(o, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                pytest.fail(f"{overlay} {o['kind']}/{o['metadata']['name']} on {version}: {exc.message} at {exc.path}")
    assert custom >= 9  # Kafka, a node pool, 4 topics, the user, 2 scaled objects (+ trigger auth)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_no_kind_escapes_validation(overlay):
    """One object of every built-in kind, with a field no schema has, is refused: the schemas are applied."""
    by_kind = {o["kind"]: o for o in rendered(overlay) if o["kind"] not in CUSTOM_KINDS.get(o["apiVersion"], set())}
    for o in by_kind.values():
        with pytest.raises(kubernetes_validate.ValidationError):  # the schema exists and is applied
            kubernetes_validate.validate({**o, "unexpectedField": 1}, KUBERNETES_VERSIONS[-1], strict=True)


# --- Strimzi


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_kafka_runs_kraft_on_node_pools_with_a_tls_scram_listener(overlay):
    kafka = one(overlay, "Kafka", "newskg")
    assert kafka["metadata"]["annotations"] == {"strimzi.io/node-pools": "enabled", "strimzi.io/kraft": "enabled"}
    assert "zookeeper" not in kafka["spec"]
    pools = [p for p in objects(overlay, "KafkaNodePool") if p["metadata"]["labels"]["strimzi.io/cluster"] == "newskg"]
    roles = {role for p in pools for role in p["spec"]["roles"]}
    assert roles == {"controller", "broker"}
    for pool in pools:
        assert pool["spec"]["replicas"] >= 1 and pool["spec"]["storage"]["type"] in {"jbod", "persistent-claim"}
        assert pool["spec"]["resources"]["limits"]["memory"]
    (listener,) = kafka["spec"]["kafka"]["listeners"]
    assert listener["tls"] is True and listener["authentication"]["type"] == "scram-sha-512"
    settings = Settings(_env_file=None, **_lower(config(overlay)))
    assert settings.kafka_bootstrap == f"newskg-kafka-bootstrap:{listener['port']}"
    assert settings.kafka_security_protocol == "SASL_SSL" and settings.kafka_sasl_mechanism == "SCRAM-SHA-512"
    peers = listener["networkPolicyPeers"]
    assert {"podSelector": {"matchLabels": {"newskg.io/kafka-client": "true"}}} in peers
    assert kafka["spec"]["kafka"]["config"]["auto.create.topics.enable"] is False


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_topics_are_the_settings_topics_with_the_design_s_retention(overlay):
    defaults = Settings(_env_file=None)
    topics = kafka_topics(overlay)
    names = [
        defaults.topic_articles,
        defaults.topic_chunks,
        defaults.topic_dlq,
        defaults.topic_dedup,
        defaults.topic_linking,
    ]
    assert sorted(topics) == sorted(names)
    brokers = sum(p["spec"]["replicas"] for p in objects(overlay, "KafkaNodePool") if "broker" in p["spec"]["roles"])
    kafka_config = one(overlay, "Kafka", "newskg")["spec"]["kafka"]["config"]
    for name, topic in topics.items():
        spec = topic["spec"]
        assert topic["metadata"]["labels"]["strimzi.io/cluster"] == "newskg"
        assert 1 <= spec["replicas"] <= brokers, name
        min_isr = spec["config"].get("min.insync.replicas", kafka_config["min.insync.replicas"])
        assert min_isr <= spec["replicas"] and (spec["replicas"] == 1 or min_isr < spec["replicas"]), name
    # The dedup log is the shared dedup state: compacted, never deleted by time (signature_log.LOG_TOPIC_CONFIG).
    from newskg.ingest.process.signature_log import LOG_TOPIC_CONFIG

    dedup = topics[defaults.topic_dedup]["spec"]["config"]
    assert dedup["cleanup.policy"] == LOG_TOPIC_CONFIG["cleanup.policy"] == "compact"
    assert dedup["retention.ms"] == -1
    # The linking log is the extract replicas' shared alias index: the same, in one partition (link_log.py).
    from newskg.extract.entities.link_log import LOG_PARTITIONS
    from newskg.extract.entities.link_log import LOG_TOPIC_CONFIG as LINKING_CONFIG

    linking = topics[defaults.topic_linking]["spec"]
    assert linking["config"]["cleanup.policy"] == LINKING_CONFIG["cleanup.policy"] == "compact"
    assert linking["config"]["retention.ms"] == -1 and linking["partitions"] == LOG_PARTITIONS == 1
    for name in (defaults.topic_articles, defaults.topic_chunks, defaults.topic_dlq):
        config_ = topics[name]["spec"]["config"]
        assert config_.get("cleanup.policy", "delete") == "delete" and config_["retention.ms"] > 0
        # a page up to NEWSKG_MAX_PAGE_BYTES travels as one message
        assert config_["max.message.bytes"] > defaults.max_page_bytes
    assert kafka_config["message.max.bytes"] > defaults.max_page_bytes


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_kafka_user_is_the_configured_one_and_its_acls_cover_topics_and_groups(overlay):
    settings = Settings(_env_file=None, **_lower(config(overlay)))
    user = one(overlay, "KafkaUser", settings.kafka_sasl_username or "")
    assert user["spec"]["authentication"]["type"] == "scram-sha-512"
    acls = user["spec"]["authorization"]["acls"]

    def allowed(kind: str, name: str, operation: str) -> bool:
        for acl in acls:
            resource = acl["resource"]
            if resource["type"] != kind or operation not in acl["operations"]:
                continue
            if resource.get("patternType") == "prefix" and name.startswith(resource["name"]):
                return True
            if resource.get("name") == name:
                return True
        return False

    for topic in kafka_topics(overlay):
        for operation in ("Describe", "DescribeConfigs", "Read", "Write"):
            assert allowed("topic", topic, operation), (topic, operation)
    for stage in STAGE_TOPIC:
        assert allowed("group", settings.consumer_group(stage), "Read")


# --- KEDA and the consumer groups


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_consumer_group_is_a_statefulset_scaled_by_keda_on_its_own_lag(overlay):
    settings = Settings(_env_file=None, **_lower(config(overlay)))
    topics = kafka_topics(overlay)
    scaled = {s["spec"]["scaleTargetRef"]["name"]: s for s in objects(overlay, "ScaledObject")}
    consumers = [(w, c) for w, c in newskg_containers(overlay) if c["args"][:1] == ["run"]]
    assert sorted(c["args"][1] for _, c in consumers) == sorted(STAGE_TOPIC)
    for workload, container in consumers:
        stage = container["args"][1]
        assert workload["kind"] == "StatefulSet"  # stable pod names = stable static member ids
        assert "replicas" not in workload["spec"]  # KEDA owns the count
        instance = next(e for e in container["env"] if e["name"] == "NEWSKG_INSTANCE_ID")
        assert instance["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
        so = scaled[workload["metadata"]["name"]]
        assert so["spec"]["scaleTargetRef"] == {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": so["metadata"]["name"],
        }
        (trigger,) = so["spec"]["triggers"]
        assert trigger["type"] == "kafka"
        topic = getattr(settings, STAGE_TOPIC[stage])
        assert trigger["metadata"]["consumerGroup"] == settings.consumer_group(stage)
        assert trigger["metadata"]["topic"] == topic
        assert trigger["metadata"]["bootstrapServers"] == settings.kafka_bootstrap
        assert 1 <= so["spec"]["minReplicaCount"] <= so["spec"]["maxReplicaCount"]
        assert so["spec"]["maxReplicaCount"] <= topics[topic]["spec"]["partitions"], (overlay, stage)
        auth = one(overlay, "TriggerAuthentication", trigger["authenticationRef"]["name"])
        params = {ref["parameter"]: ref for ref in auth["spec"]["secretTargetRef"]}
        assert set(params) == {"sasl", "username", "password", "tls", "ca"}
        generated = one(overlay, "Secret", params["sasl"]["name"])
        assert generated["stringData" if "stringData" in generated else "data"]
        for param in ("sasl", "username", "tls"):
            assert params[param]["key"] in generated.get("data", {}), param


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_referenced_secret_is_generated_made_by_strimzi_or_documented(overlay):
    present = {s["metadata"]["name"] for s in objects(overlay, "Secret")}
    strimzi = {"newskg-cluster-ca-cert"} | {u["metadata"]["name"] for u in objects(overlay, "KafkaUser")}
    readme = (K8S / "README.md").read_text()
    for name, optional in _secret_references(overlay):
        if name in present or name in strimzi:
            continue
        # dev generates its Secrets; only an optional one (the LLM key: M0 and extractive answers need none) may
        # be absent there
        assert (overlay == "prod" or optional) and name in EXTERNAL_SECRETS, (overlay, name)
        assert f"`{name}`" in readme, f"k8s/README.md does not say how to create {name}"
    if overlay == "dev":
        assert {"newskg-neo4j", "newskg-qdrant", "newskg-api"} <= present


def _secret_references(overlay: str) -> Iterator[tuple[str, bool]]:
    for workload in workloads(overlay):
        spec = pod_spec(workload)
        for container in spec["containers"]:
            for var in container.get("env", []):
                ref = var.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    yield ref["name"], ref.get("optional", False)
        for volume in spec.get("volumes", []):
            if "secret" in volume:
                yield volume["secret"]["secretName"], False
    for auth in objects(overlay, "TriggerAuthentication"):
        for ref in auth["spec"]["secretTargetRef"]:
            yield ref["name"], False


# --- settings


def _lower(env: dict[str, str]) -> dict[str, Any]:
    """NEWSKG_X=value → x=value, parsed as pydantic-settings would (JSON for lists)."""
    fields = Settings.model_fields
    out: dict[str, Any] = {}
    for key, value in env.items():
        name = key.removeprefix("NEWSKG_").lower()
        out[name] = json.loads(value) if name in fields and "list" in str(fields[name].annotation) else value
    return out


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_variable_the_manifests_set_is_a_setting_and_parses(overlay, monkeypatch):
    for workload, container in newskg_containers(overlay):
        env = container_env(overlay, container)
        unknown = {k for k in env if k.removeprefix("NEWSKG_").lower() not in Settings.model_fields}
        assert not unknown, (workload["metadata"]["name"], unknown)
        for key in list(Settings.model_fields):
            monkeypatch.delenv(f"NEWSKG_{key.upper()}", raising=False)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        Settings(_env_file=None)  # every value has the setting's type


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_component_gets_the_settings_it_needs_on_a_cluster(overlay):
    seen: set[tuple[str, ...]] = set()
    for workload, container in newskg_containers(overlay):
        command = command_of(container)
        seen.add(command)
        env = {k.removeprefix("NEWSKG_").lower() for k in container_env(overlay, container)}
        missing = REQUIRED[command] - env
        assert not missing, (workload["metadata"]["name"], sorted(missing))
    assert seen == set(REQUIRED)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_setting_is_set_on_the_cluster_or_its_default_justified(overlay):
    set_somewhere = {
        key.removeprefix("NEWSKG_").lower()
        for _, container in newskg_containers(overlay)
        for key in container_env(overlay, container)
    }
    fields, kept = set(Settings.model_fields), set(DEFAULT_ON_A_CLUSTER)
    neither = fields - set_somewhere - kept
    assert not neither, f"set these in k8s/ or add them to DEFAULT_ON_A_CLUSTER with a reason: {sorted(neither)}"
    assert not set_somewhere & kept, f"set in k8s/ and listed as default: {sorted(set_somewhere & kept)}"
    assert not kept - fields, f"no longer settings: {sorted(kept - fields)}"
    for name, reason in DEFAULT_ON_A_CLUSTER.items():
        assert len(reason.split()) >= 5, f"{name} needs a reason"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_embedding_threads_follow_the_pod_s_cpu_limit(overlay):
    """os.cpu_count() in a pod is the node's CPU count: ONNX Runtime would start that many threads under a CFS quota
    of a few CPUs and stall on throttling."""
    for workload, container in newskg_containers(overlay):
        if "embed_threads" not in REQUIRED[command_of(container)]:
            continue
        (var,) = [v for v in container["env"] if v["name"] == "NEWSKG_EMBED_THREADS"]
        assert var["valueFrom"] == {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1"}}, workload
        threads = int(container_env(overlay, container)["NEWSKG_EMBED_THREADS"])
        assert 1 <= threads <= 4, (workload["metadata"]["name"], threads)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_topic_settings_match_the_topics(overlay):
    settings = Settings(_env_file=None, **_lower(config(overlay)))
    topics = kafka_topics(overlay)
    stream = [topics[settings.topic_articles], topics[settings.topic_chunks]]
    assert {t["spec"]["partitions"] for t in stream} == {settings.topic_partitions}
    assert {t["spec"]["replicas"] for t in topics.values()} == {settings.topic_replication}


# --- ports, probes, volumes


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_api_ports_and_probes_match_the_app(overlay):
    settings = Settings(_env_file=None, **_lower(config(overlay)))
    api = one(overlay, "Deployment", "newskg-api")
    (container,) = pod_spec(api)["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": settings.api_port, "metrics": settings.api_metrics_port}
    assert settings.api_host == "0.0.0.0"
    routes = {getattr(r, "path", None) for r in create_app(None, {}, api_keys=["k"]).routes}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        get = container[probe]["httpGet"]
        assert get["port"] == "http" and get["path"] in routes and get["path"] in OPEN_PATHS, probe
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    annotations = api["spec"]["template"]["metadata"]["annotations"]
    assert int(annotations["prometheus.io/port"]) == settings.api_metrics_port
    service = one(overlay, "Service", "newskg-api")
    assert [p["targetPort"] for p in service["spec"]["ports"]] == ["http"]  # the metrics port is not published
    ingress = one(overlay, "NetworkPolicy", "api-ingress")["spec"]["ingress"]
    assert sorted(p["port"] for rule in ingress for p in rule["ports"]) == sorted(ports.values())
    hpa = one(overlay, "HorizontalPodAutoscaler", "newskg-api")
    assert hpa["spec"]["scaleTargetRef"]["name"] == "newskg-api"
    assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_feeds_scheduler_is_one_replica_recreated(overlay):
    feeds = one(overlay, "Deployment", "newskg-feeds")
    assert feeds["spec"]["replicas"] == 1 and feeds["spec"]["strategy"] == {"type": "Recreate"}
    volumes = {v["name"]: v for v in pod_spec(feeds)["volumes"]}
    (container,) = pod_spec(feeds)["containers"]
    state = next(m for m in container["volumeMounts"] if m["mountPath"] == config(overlay)["NEWSKG_DATA_DIR"])
    assert "persistentVolumeClaim" in volumes[state["name"]]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_writable_paths_are_volumes_under_a_read_only_root(overlay):
    data_dir = config(overlay)["NEWSKG_DATA_DIR"]
    for workload, container in newskg_containers(overlay):
        mounts = {m["mountPath"] for m in container.get("volumeMounts", [])}
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert "/tmp" in mounts, workload["metadata"]["name"]  # member leases, library caches
        if "data_dir" in REQUIRED[command_of(container)]:  # LLM cache, feed state
            assert data_dir in mounts, workload["metadata"]["name"]
        if "kafka_ssl_cafile" in REQUIRED[command_of(container)]:
            cafile = Path(config(overlay)["NEWSKG_KAFKA_SSL_CAFILE"])
            assert str(cafile.parent) in mounts


# --- security (the rules checkov's Kubernetes checks enforce)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_pod_is_non_root_unprivileged_and_bounded(overlay):
    uid = _dockerfile_uid()
    for workload in workloads(overlay):
        name = workload["metadata"]["name"]
        spec = pod_spec(workload)
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True and pod["seccompProfile"] == {"type": "RuntimeDefault"}, name
        assert spec["automountServiceAccountToken"] is False and spec["serviceAccountName"] == "newskg", name
        assert not any(spec.get(k) for k in ("hostNetwork", "hostPID", "hostIPC")), name
        for container in spec["containers"]:
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False, name
            assert context["capabilities"] == {"drop": ["ALL"]}, name
            assert not context.get("privileged"), name
            resources = container["resources"]
            for bound in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(resources[bound]), (name, bound)
            assert ":" in container["image"] and not container["image"].endswith(":latest"), name
        if any(c in spec["containers"] for _, c in newskg_containers(overlay) if _ is workload):
            assert pod["runAsUser"] == uid, name  # the image's user owns /data


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_strimzi_pods_carry_restricted_security_contexts(overlay):
    kafka = one(overlay, "Kafka", "newskg")["spec"]
    templates = [kafka["kafka"]["template"], kafka["entityOperator"]["template"]]
    templates += [p["spec"]["template"] for p in objects(overlay, "KafkaNodePool")]
    for template in templates:
        assert template["pod"]["securityContext"] == {
            "runAsNonRoot": True,
            "seccompProfile": {"type": "RuntimeDefault"},
        }
        for key, value in template.items():
            if key.endswith("Container"):
                assert value["securityContext"]["allowPrivilegeEscalation"] is False
                assert value["securityContext"]["capabilities"] == {"drop": ["ALL"]}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_checkov_skips_are_justified_in_place(overlay):
    for o in rendered(overlay):
        for key, value in o["metadata"].get("annotations", {}).items():
            if key.startswith("checkov.io/skip"):
                check, _, reason = value.partition("=")
                assert re.fullmatch(r"CKV2?_K8S_\d+", check), value
                assert len(reason.split()) >= 5, f"{o['metadata']['name']}: {value} needs a reason"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_disruption_budgets_cover_the_scaled_workloads(overlay):
    budgets = objects(overlay, "PodDisruptionBudget")
    for workload in workloads(overlay):
        scaled = workload["kind"] in {"Deployment", "StatefulSet"} and workload["metadata"]["name"] in {
            "newskg-api",
            "newskg-process",
            "newskg-extract",
        }
        if not scaled:
            continue
        labels = pod_labels(workload)
        covering = [b for b in budgets if b["spec"]["selector"]["matchLabels"].items() <= labels.items()]
        assert len(covering) == 1, workload["metadata"]["name"]
        assert covering[0]["spec"].get("maxUnavailable") == 1


# --- network policies


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_network_policies_grant_only_the_flows_the_design_needs(overlay):
    by_component = {pod_labels(w).get("app.kubernetes.io/component"): pod_labels(w) for w in workloads(overlay)}
    grants = {
        component: {
            k.removeprefix("newskg.io/") for k, v in labels.items() if k.startswith("newskg.io/") and v == "true"
        }
        for component, labels in by_component.items()
        if labels.get("app.kubernetes.io/name") == "newskg"
    }
    assert grants == {
        "process": {"kafka-client"},
        "extract": {"kafka-client", "graph-client", "vector-client", "llm-client"},
        "api": {"kafka-client", "graph-client", "vector-client", "llm-client"},
        "feeds": {"kafka-client", "web-client"},
        "graph-init": {"graph-client"},
        "reconcile": {"graph-client", "vector-client"},
    }
    policies = objects(overlay, "NetworkPolicy")
    all_labels = [pod_labels(w) for w in workloads(overlay)]
    for policy in policies:  # no policy selects nothing
        selector = policy["spec"]["podSelector"].get("matchLabels", {})
        assert any(selector.items() <= labels.items() for labels in all_labels), policy["metadata"]["name"]
    deny = one(overlay, "NetworkPolicy", "default-deny-ingress")["spec"]
    assert deny == {"podSelector": {}, "policyTypes": ["Ingress"]}
    # every newskg pod's egress is restricted (the policy selects it) and the shared rule opens DNS only
    shared = one(overlay, "NetworkPolicy", "newskg-egress")["spec"]
    assert shared["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": "newskg"}}
    assert [p["port"] for rule in shared["egress"] for p in rule["ports"]] == [53, 53]


# --- the image


def _dockerfile_stages() -> list[list[str]]:
    """The Dockerfile's instructions (continuations joined, comments dropped), split into stages."""
    text = re.sub(r"\\\n", " ", (K8S / "Dockerfile").read_text())
    stages: list[list[str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            stages.append([])
        if stages:
            stages[-1].append(line)
    return stages


def _dockerfile_stage(name: str) -> list[str]:
    return next(stage for stage in _dockerfile_stages() if stage[0].endswith(f" AS {name}"))


def _dockerfile_uid() -> int:
    user = next(line for line in reversed(_dockerfile_stages()[-1]) if line.upper().startswith("USER "))
    return int(user.split()[1].split(":")[0])


def test_dockerfile_final_stage_is_non_root_without_compilers():
    stages = _dockerfile_stages()
    assert len(stages) >= 2
    build, final = " ".join(_dockerfile_stage("build")), stages[-1]
    text = " ".join(final)
    assert "AS runtime" in final[0] and "COPY --from=build /opt/venv /opt/venv" in text
    for tool in ("build-essential", "gcc", "g++", "cmake", "make ", "pip install"):
        assert tool not in text, tool
    assert final[-1].startswith("CMD") or final[-1].startswith("ENTRYPOINT")
    uid = _dockerfile_uid()
    assert uid >= 10000  # checkov CKV_K8S_40: a high uid, matching the pods' runAsUser
    assert f"--uid {uid}" in text
    assert "mkdir -p /data" in text and f"chown {uid}:{uid} /data" in text
    assert "NEWSKG_DATA_DIR=/data" in text and "HF_HUB_OFFLINE=1" in text
    # CPU torch first and alone, then the project with the lock
    torch = build.index('pip install "torch==2.13.0" --index-url')
    assert torch < build.index("pip install -c constraints.txt .")
    assert "whl/cpu" in build


def test_dockerfile_copies_every_package_and_exposes_the_app_ports():
    import tomllib

    text = " ".join(_dockerfile_stage("build"))
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    for pattern in packages["include"]:
        package = pattern.rstrip("*")
        assert f"COPY {package} {package}" in text, package
    final = " ".join(_dockerfile_stages()[-1])
    exposed = {int(p) for p in re.findall(r"EXPOSE ([\d ]+)", final)[0].split()}
    settings = Settings(_env_file=None, **_lower(config("prod")))
    assert exposed == {settings.api_port, settings.api_metrics_port}
    assert config("prod")["NEWSKG_DATA_DIR"] == "/data"


def test_the_image_carries_the_explorers_graph_library_without_node():
    """/explore needs cytoscape.min.js: the lock's copy (`npm ci --omit=dev` in a stage of its own) goes into the
    package where qa/explore.py looks when there is no node_modules, the build checks the installed package finds it,
    and neither Node nor npm reaches the final stage."""
    import json

    from newskg.qa import explore

    assets = " ".join(_dockerfile_stage("assets"))
    assert "COPY package.json package-lock.json" in assets and "npm ci --omit=dev" in assets
    lock = json.loads((ROOT / "package-lock.json").read_text())["packages"]
    assert "dev" not in lock["node_modules/cytoscape"]  # a dependency: --omit=dev keeps it
    vendored = explore.VENDOR_DIR.relative_to(ROOT) / explore.GRAPH_LIBRARY
    build = " ".join(_dockerfile_stage("build"))
    copy = f"COPY --from=assets /assets/node_modules/cytoscape/dist/cytoscape.min.js {vendored.as_posix()}"
    assert copy in build
    assert build.index(copy) < build.index("pip install -c constraints.txt .")  # inside the installed package
    assert 'cd / && python -c "from newskg.qa.explore import asset_file' in build
    final = " ".join(_dockerfile_stages()[-1])
    assert "npm" not in final and "node" not in final.replace("nologin", "")
