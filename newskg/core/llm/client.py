"""The one LLM client every call in the project goes through: any OpenAI-compatible endpoint, retries with
backoff on 429/5xx/timeouts, a concurrency limit, JSON answers parsed into the prompt's pydantic model (with a
repair pass and one corrective retry), a persistent cache keyed by (model, prompt name, version, hash), token and
cost accounting, and a call budget that stops cleanly."""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import openai
from openai import Omit, OpenAI, omit
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.shared_params import ResponseFormatJSONObject, ResponseFormatJSONSchema
from openai.types.shared_params.response_format_json_schema import JSONSchema
from pydantic import BaseModel, ValidationError
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from newskg.core.errors import NewskgError
from newskg.core.llm.cache import LLMCache, Tally
from newskg.core.llm.prompt import M, Prompt

if TYPE_CHECKING:
    import httpx2  # the HTTP client type the openai SDK declares (httpx's API: tests pass an httpx.Client)

log = logging.getLogger(__name__)
ResponseFormat = ResponseFormatJSONObject | ResponseFormatJSONSchema
RETRYABLE = (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError, openai.InternalServerError)
# How a JSON answer is asked for, most constrained first: OpenAI's structured outputs (the response model's JSON
# schema; vLLM honours it too), llama-cpp-python's server form of the same (`json_object` with a `schema`, compiled
# to a grammar), then plain JSON mode (parsed and repaired here). An endpoint that refuses one form (refused_format)
# is asked in the next for the rest of the session.
RESPONSE_FORMATS = ("json_schema", "json_object_schema", "json_object")


def refused_format(exc: BaseException) -> bool:
    """The endpoint rejected the response format it was asked for: an error (400, 422, or the 500 llama-cpp-python's
    server answers its own validation errors with) whose message names it. Any other 400 (a prompt too long, a bad
    message) is no reason to ask for less structure."""
    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 422, 500):
        return False
    return any(word in str(exc) for word in ("response_format", "json_schema", "schema"))


def _transient(exc: BaseException) -> bool:
    return isinstance(exc, RETRYABLE) and not refused_format(exc)


_JSON_BLOCK = re.compile(r"\{.*\}", re.S)


class BudgetExceeded(NewskgError, RuntimeError):
    """The --max-llm-calls budget is spent: the caller stops cleanly (nothing half-written)."""

    REASON = "llm_budget_exceeded"
    STOPS = True


@dataclass
class SessionUsage:
    calls: int = 0
    cached: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    counters: dict[str, int] = field(default_factory=dict[str, int])  # "prompt.name" -> n, see LLMClient.count


@dataclass
class Outcomes:
    """Outcomes of answers held back from the persistent ledger (LLMClient.deferring)."""

    usage: dict[str, list[int]] = field(default_factory=dict[str, list[int]])  # prompt -> [cached, failures]
    counters: dict[tuple[str, str], int] = field(default_factory=dict[tuple[str, str], int])  # (prompt, name) -> n


@dataclass(frozen=True)
class LLMOptions:
    """How a client uses its endpoint (the `llm_*` settings): requests in flight at once, seconds per request, retries
    per logical call, the call budget (None: no budget; spent: BudgetExceeded), the longest answer, whether to ask for
    JSON, and the price per million prompt and completion tokens for the usage ledger."""

    max_concurrency: int = 4
    timeout_s: float = 120.0
    max_retries: int = 4
    max_calls: int | None = None
    price_in_per_mtok: float = 0.0
    price_out_per_mtok: float = 0.0
    json_mode: bool = True
    max_tokens: int = 512


class LLMClient:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        cache: LLMCache | None = None,
        options: LLMOptions = LLMOptions(),
        http_client: httpx2.Client | None = None,
    ):
        self.model = model
        self.cache = cache
        self.max_calls = options.max_calls
        self.json_mode = options.json_mode
        self.max_tokens = options.max_tokens
        self.usage = SessionUsage()
        self._scopes: list[Outcomes] = []  # open `deferring` blocks, innermost last
        self._prices = (options.price_in_per_mtok, options.price_out_per_mtok)
        self._slots = threading.BoundedSemaphore(options.max_concurrency)
        self._lock = threading.Lock()
        self._retries = options.max_retries
        self.response_format = RESPONSE_FORMATS[0]  # the form this endpoint accepts (steps down when refused)
        # Retries are ours (tenacity, counted against the budget once per logical call), not the SDK's.
        self._client = OpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=options.timeout_s,
            max_retries=0,
            http_client=http_client,
        )

    def complete(self, prompt: Prompt[M], response_model: type[M] | None = None) -> M | None:
        """The parsed answer, or None when the model's output could not be parsed even after a retry."""
        model_cls = response_model or prompt.response_model
        key = prompt.digest(self.model)
        if self.cache and (hit := self.cache.get(key)) is not None:
            parsed = _parse(hit, model_cls)
            if parsed is not None:
                self._account(prompt, cached=1)
                return parsed
        messages = list(prompt.messages)
        for attempt in range(2):
            content = self._call(prompt, messages, model_cls)
            parsed = _parse(content, model_cls)
            if parsed is not None:
                if self.cache:
                    self.cache.put(key, self.model, prompt.name, prompt.version, parsed.model_dump_json())
                return parsed
            log.warning("unparseable %s answer (attempt %d): %.200r", prompt.name, attempt + 1, content)
            retry = (
                "That was not valid JSON of the requested shape. Answer again with only the JSON object."
                if prompt.json_answer
                else "Please follow the requested answer format exactly."
            )
            messages = [*messages, {"role": "assistant", "content": content[:4000]}, {"role": "user", "content": retry}]
        self._account(prompt, failures=1)
        return None

    def count(self, prompt_name: str, name: str, n: int = 1) -> None:
        """Record an outcome of a prompt's answers (kept in the session and in the persistent ledger, where
        `newskg extract stats` shows it)."""
        if n <= 0:
            return
        with self._lock:
            key = f"{prompt_name}.{name}"
            self.usage.counters[key] = self.usage.counters.get(key, 0) + n
            if self._scopes:  # held back until the work is committed (`deferring`)
                counters = self._scopes[-1].counters
                counters[(prompt_name, name)] = counters.get((prompt_name, name), 0) + n
                return
        if self.cache:
            self.cache.count(self.model, prompt_name, name, n)

    @contextmanager
    def deferring(self) -> Generator[Outcomes]:
        """Hold back from the persistent ledger (`newskg extract stats`) the outcomes of the answers got inside
        this block (cache hits, unparseable answers, `count`): they reach it only when `settle` is called with what
        this yields, once the work they belong to is committed. Work done again (a batch redelivered after an
        outage, a refused commit or a crash) is then counted once: the first try's outcomes are never settled.
        Spend (calls, tokens, cost) is written as it happens: the endpoint was paid whether or not the work was
        committed, and its answer is cached, so the work done again does not pay twice. Blocks nest: the innermost
        one holds. The session's own `usage` is not deferred."""
        outcomes = Outcomes()
        with self._lock:
            self._scopes.append(outcomes)
        try:
            yield outcomes
        finally:
            with self._lock:
                self._scopes.remove(outcomes)

    def settle(self, outcomes: Outcomes) -> None:
        """Write outcomes a `deferring` block held back to the ledger (once: settling them again writes nothing)."""
        with self._lock:
            usage, counters = dict(outcomes.usage), dict(outcomes.counters)
            outcomes.usage.clear()
            outcomes.counters.clear()
        if not self.cache:
            return
        for prompt, (cached, failures) in usage.items():
            self.cache.record(self.model, prompt, Tally(cached=cached, failures=failures))
        for (prompt, name), n in counters.items():
            self.cache.count(self.model, prompt, name, n)

    def _call(self, prompt: Prompt[M], messages: list[dict[str, str]], model_cls: type[M]) -> str:
        with self._lock:
            if self.max_calls is not None and self.usage.calls >= self.max_calls:
                raise BudgetExceeded(f"LLM call budget of {self.max_calls} spent")
            self.usage.calls += 1
        while True:
            wanted = self.response_format
            try:
                return self._send(prompt, messages, self._format_for(prompt, model_cls, wanted))
            except openai.APIStatusError as exc:
                if (
                    not refused_format(exc)
                    or not (self.json_mode and prompt.json_answer)
                    or not self._step_down(wanted)
                ):
                    raise
                log.warning(
                    "the endpoint refused response_format %s (%s): asking with %s", wanted, exc, self.response_format
                )

    def _step_down(self, refused: str) -> bool:
        """The next, less constrained form after `refused`; False when there is none left."""
        with self._lock:
            if self.response_format != refused:
                return True  # another thread stepped down already
            at = RESPONSE_FORMATS.index(refused)
            if at + 1 == len(RESPONSE_FORMATS):
                return False
            self.response_format = RESPONSE_FORMATS[at + 1]
            return True

    def _format_for(self, prompt: Prompt[M], model_cls: type[M], form: str) -> ResponseFormat | Omit:
        if not (self.json_mode and prompt.json_answer):
            return omit
        if form == "json_object":
            return ResponseFormatJSONObject(type="json_object")
        schema = model_cls.model_json_schema()
        if form == "json_object_schema":
            return cast("ResponseFormat", {"type": "json_object", "schema": schema})
        name = re.sub(r"[^A-Za-z0-9_-]", "_", prompt.name)[:64]
        return ResponseFormatJSONSchema(type="json_schema", json_schema=JSONSchema(name=name, schema=schema))

    def _send(self, prompt: Prompt[M], messages: list[dict[str, str]], response_format: ResponseFormat | Omit) -> str:
        retrying = Retrying(
            retry=retry_if_exception(_transient),
            stop=stop_after_attempt(self._retries + 1),
            wait=wait_exponential(multiplier=0.5, max=20),
            reraise=True,
        )
        with self._slots:
            reply = retrying(
                lambda: self._client.chat.completions.create(
                    model=self.model,
                    messages=[_openai_message(m) for m in messages],
                    temperature=prompt.temperature,
                    max_tokens=self.max_tokens,
                    response_format=response_format,
                )
            )
        usage = reply.usage
        self._account(
            prompt,
            calls=1,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
        )
        return reply.choices[0].message.content or ""

    def _account(
        self,
        prompt: Prompt[BaseModel],
        calls: int = 0,
        cached: int = 0,
        failures: int = 0,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
    ) -> None:
        with self._lock:
            self.usage.cached += cached
            self.usage.failures += failures
            self.usage.prompt_tokens += prompt_tokens
            self.usage.completion_tokens += completion_tokens
            if self._scopes and (cached or failures):  # outcomes: held back until the work is committed
                totals = self._scopes[-1].usage.setdefault(prompt.name, [0, 0])
                totals[0] += cached
                totals[1] += failures
                cached = failures = 0
                if not calls:
                    return
        cost = (prompt_tokens * self._prices[0] + completion_tokens * self._prices[1]) / 1e6
        if self.cache:
            added = Tally(calls, cached, failures, prompt_tokens, completion_tokens, cost)
            self.cache.record(self.model, prompt.name, added)


def _openai_message(message: dict[str, str]) -> ChatCompletionMessageParam:
    """A prompt's {"role", "content"} message as the SDK's typed message."""
    role, content = message["role"], message["content"]
    if role == "system":
        return ChatCompletionSystemMessageParam(role="system", content=content)
    if role == "assistant":
        return ChatCompletionAssistantMessageParam(role="assistant", content=content)
    if role == "user":
        return ChatCompletionUserMessageParam(role="user", content=content)
    raise ValueError(f"unknown message role {role!r}")


def _parse(content: str, model_cls: type[M]) -> M | None:
    """JSON into the model; repair: the outermost {...} block; then the model's own text fallback, if it has one."""
    candidates = [content]
    if match := _JSON_BLOCK.search(content or ""):
        candidates.append(match.group(0))
    for candidate in candidates:
        try:
            return model_cls.model_validate(json.loads(candidate))
        except (json.JSONDecodeError, ValidationError, TypeError):
            continue
    from_text = getattr(model_cls, "from_text", None)
    return from_text(content) if from_text else None
