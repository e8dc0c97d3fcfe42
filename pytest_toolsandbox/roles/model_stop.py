"""Model errors that no other item can escape: the model does not exist (retired, or a wrong id: HTTP 404)
or the account has no quota left (OpenAI's `insufficient_quota` 429). Every later request would fail
the same way, so the first one stops the run (`running/model_stop.py`) with one line naming the model
and what to do, instead of an error per item after its retries.

The reason is kept per process: each xdist worker stops on its own first such error, and pytest-xdist
stops the others.
"""

from __future__ import annotations

import threading

from pytest_toolsandbox.recording.secrets import scrub_text
from pytest_toolsandbox.roles.model_spec import ModelSettings, use_instead
from pytest_toolsandbox.roles.retry import error_detail, is_quota_exhausted, status_of

CHECK_THE_ID = "check the model id (and --model-base-url) against the provider's model list"
_lock = threading.Lock()
_reason: list[str] = []


def stop_reason() -> str | None:
    """Why this process stopped sending model requests, or None."""
    with _lock:
        return _reason[0] if _reason else None


def stop_run(reason: str) -> str:
    """Record the first reason (later ones are the same failure seen by other episodes); returns it."""
    with _lock:
        if not _reason:
            _reason.append(reason)
        return _reason[0]


def reset() -> None:
    """Forget the reason (a new session in the same process, as pytester's in-process runs are)."""
    with _lock:
        _reason.clear()


def unavailable(error: BaseException, settings: ModelSettings) -> str | None:
    """The one-line stop reason when `error` means no request to this model can succeed, else None."""
    status = status_of(error)
    if status == 404:
        return (f"{settings.label} is not available (HTTP 404: {_message(error)}): the model does not exist "
                f"or has been retired; {use_instead(settings, CHECK_THE_ID)}")
    if status == 429 and is_quota_exhausted(error):
        return (f"{settings.label}: the account's quota is used up (HTTP 429 insufficient_quota): add credit or "
                f"use another key ({settings.key_variable}); not retried")
    return None


def _message(error: BaseException) -> str:
    """The API's own message (one line, scrubbed before it is cut), else the error's text."""
    message = (error_detail(error) or {}).get("message")
    text = message if isinstance(message, str) else str(error)
    return scrub_text(" ".join(text.split()))[:200] or type(error).__name__
