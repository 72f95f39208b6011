"""Retry policy shared by the HTTP model adapters: backoff with jitter, honouring retry-after."""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from opentelemetry import trace

from glove_core.errors import (
    ContextWindowExceededError,
    ModelAPIError,
    ModelAuthenticationError,
    ModelBadRequestError,
    ModelError,
    ModelOverloadedError,
    ModelRateLimitError,
    ModelServerError,
)
from glove_core.tracing import error_type

__all__ = [
    "RETRYABLE_STATUS",
    "RetryPolicy",
    "TryAgain",
    "is_retryable",
    "parse_retry_after",
    "status_error",
    "with_retries",
]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

_CONTEXT_MARKERS = (
    "prompt is too long",
    "context window",
    "context_length",
    "maximum context length",
    "too many tokens",
)

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
"""HTTP statuses worth sending again (any other 5xx is retried too)."""


def _default_sleep(seconds: float) -> Awaitable[None]:
    return asyncio.sleep(seconds)


@dataclass(frozen=True)
class RetryPolicy:
    """How a model adapter retries 429, 529, 5xx and dropped connections.

    Attributes:
        max_retries: retries after the first attempt (default 4; 0 disables retrying).
        base_delay: seconds before the first retry when the provider gives no
            ``retry-after`` (default 0.5); doubles each retry, with jitter.
        max_delay: the longest computed backoff, in seconds (default 30).
        max_retry_after: the longest ``retry-after`` honoured, in seconds (default 60);
            a provider asking for longer gets the typed error at once.
        sleep: how to wait (``asyncio.sleep``); tests pass a recorder to see the delays.
    """

    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 60.0
    sleep: Callable[[float], Awaitable[None]] = field(default=_default_sleep, compare=False)

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {self.max_retries}")
        if self.base_delay < 0 or self.max_delay < 0 or self.max_retry_after < 0:
            raise ValueError("RetryPolicy delays must be 0 or more seconds")

    @property
    def max_attempts(self) -> int:
        """The first attempt plus the retries."""
        return self.max_retries + 1

    def delay(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait after failed attempt number ``attempt`` (1-based), or None to stop.

        ``retry_after`` (what the provider asked for) wins over the computed backoff.
        """
        if attempt >= self.max_attempts:
            return None
        if retry_after is not None:
            if retry_after > self.max_retry_after:
                return None
            return max(0.0, retry_after)
        backoff: float = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return backoff * (0.5 + random.random() / 2)


def is_retryable(status: int) -> bool:
    """True when an HTTP status is worth sending again."""
    return status in RETRYABLE_STATUS or status >= 500


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def status_error(
    provider: str,
    status: int,
    message: str,
    *,
    headers: Mapping[str, str],
    attempt: int,
    code: str | None = None,
) -> ModelAPIError:
    """The typed error for an HTTP error answer (400 over the context window is its own)."""
    cls: type[ModelAPIError]
    if status in (400, 413):
        lowered = f"{message} {code or ''}".lower()
        is_context = any(marker in lowered for marker in _CONTEXT_MARKERS)
        cls = ContextWindowExceededError if is_context else ModelBadRequestError
    elif status in (401, 403):
        cls = ModelAuthenticationError
    elif status == 429:
        cls = ModelRateLimitError
    elif status == 529:
        cls = ModelOverloadedError
    elif status >= 500:
        cls = ModelServerError
    else:
        cls = ModelAPIError
    request_id = headers.get("request-id") or headers.get("x-request-id")
    return cls(
        provider,
        status,
        message,
        retry_after=parse_retry_after(headers),
        attempts=attempt,
        request_id=request_id,
    )


class TryAgain(Exception):
    """Raised by one attempt of a model call whose failure may pass (429, 529, 5xx, a dropped
    connection), carrying the typed error to raise once the retries run out.

    Attributes:
        error: what the caller gets when no retry is left.
        retry_after: seconds the provider asked to wait, if it did.
    """

    def __init__(self, error: ModelError, retry_after: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after


async def with_retries(
    policy: RetryPolicy,
    name: str,
    attempt: Callable[[int], Awaitable[_T]],
    before: Callable[[], None] | None = None,
) -> _T:
    """Run ``attempt(n)`` (n from 1) until it returns, raises anything but ``TryAgain``, or
    ``policy`` says stop; then its ``TryAgain.error`` is raised. The one retry loop of every
    model adapter.

    Args:
        policy: how many retries, and how long to wait before each.
        name: the adapter, for the log line of each retry.
        attempt: one try; raises ``TryAgain`` for a failure worth another.
        before: called before every attempt (e.g. to stop when the request was aborted).
    """
    number = 0
    while True:
        number += 1
        if before is not None:
            before()
        try:
            return await attempt(number)
        except TryAgain as failure:
            delay = policy.delay(number, failure.retry_after)
            if delay is None:
                raise failure.error from failure.__cause__
            logger.info("%s failed (%s); retry %d in %.2fs", name, failure.error, number, delay)
            # On the model call's span (``chat {model}``), when one is recording.
            trace.get_current_span().add_event(
                "gen_ai.retry",
                {
                    "glove.retry.attempt": number,
                    "glove.retry.delay_s": delay,
                    "error.type": error_type(failure.error),
                },
            )
        await policy.sleep(delay)
