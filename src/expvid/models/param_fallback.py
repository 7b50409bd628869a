"""Learning from a server's HTTP 400 which request parameter it does not take, once per endpoint.

OpenAI names the culprit in a structured error body:

    {"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model.
               Use 'max_completion_tokens' instead.", "type": "invalid_request_error",
               "param": "max_tokens", "code": "unsupported_parameter"}}

and `"code": "unsupported_value"` for a value ("Unsupported value: 'temperature' does not support 0.1
with this model. Only the default (1) value is supported."; for reasoning_effort the message lists
the supported values). Proxies and other OpenAI-compatible servers say the same in other words
("Unrecognized request argument supplied: chat_template_kwargs", LiteLLM's "does not support
parameters: ['top_p']"). `unsupported_from_error` reads all of these.

The OpenAI-compatible backend then resends the request once without the parameter (or with the
named replacement, or the nearest supported value) and remembers the adjustment for the rest of the
run for that endpoint and model, so the next requests go out right the first time. Only parameters
the harness adds on its own are ever adjusted; a key the user put in `extra_body`, the messages or
the model name never are: that 400 stays a failure with the server's message.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import asdict, dataclass
from typing import Any, Literal

from expvid.models.param_rules import nearest_effort

#: Parameters the backend adds by itself and may adapt.
ADAPTABLE = frozenset(
    {
        "temperature",
        "top_p",
        "seed",
        "max_tokens",
        "max_completion_tokens",
        "reasoning_effort",
        "chat_template_kwargs",
        "media_io_kwargs",
        # structured output (a judge's JSON reply): servers without it get the prompt alone
        "response_format",
        # Responses API (`/v1/responses`): nested reasoning settings
        "reasoning.effort",
        "reasoning.summary",
    }
)
TOKEN_FIELDS = ("max_tokens", "max_completion_tokens")

_UNSUPPORTED = re.compile(r"Unsupported (parameter|value):\s*'([A-Za-z_][\w.]*)'")
_REPLACEMENT = re.compile(r"Use '([A-Za-z_]\w*)' instead")
_SUPPORTED_VALUES = re.compile(r"Supported values are:?\s*(.*)", re.IGNORECASE)
_UNRECOGNIZED = re.compile(r"Unrecognized request arguments? supplied:\s*([A-Za-z_][\w, ]*)")
_LITELLM = re.compile(r"does not support parameters?:\s*\[([^\]]*)\]")


@dataclass(frozen=True)
class Unsupported:
    """A parameter (or one of its values) that a server refused, as its error body says."""

    param: str
    kind: Literal["parameter", "value"]
    message: str
    replacement: str | None = None
    supported_values: tuple[str, ...] = ()


def _error_object(body: Any) -> dict[str, Any] | None:
    """The innermost {"message": ...} object of an error body (Azure nests one error in another)."""
    node = body
    for _ in range(3):
        if not isinstance(node, dict):
            return None
        inner = node.get("error")
        if isinstance(inner, dict):
            node = inner
            continue
        break
    return node if isinstance(node, dict) and isinstance(node.get("message"), str) else None


def unsupported_from_error(text: str) -> Unsupported | None:
    """What a 400 body says is unsupported, or None when it says something else."""
    try:
        body: Any = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        body = None
    error = _error_object(body)
    message = error["message"] if error is not None else text
    code = str(error.get("code") or "") if error is not None else ""
    named = error.get("param") if error is not None else None
    match = _UNSUPPORTED.search(message)
    param: str | None = named if isinstance(named, str) and named else None
    kind: Literal["parameter", "value"] = "parameter"
    if match is not None:
        param = param or match.group(2)
        kind = "value" if match.group(1) == "value" else "parameter"
    elif code in ("unsupported_parameter", "unsupported_value") and param:
        kind = "value" if code == "unsupported_value" else "parameter"
    else:
        other = _UNRECOGNIZED.search(message) or _LITELLM.search(message)
        if other is None:
            return None
        names = [n.strip(" '\"") for n in other.group(1).split(",") if n.strip(" '\"")]
        if not names:
            return None
        param = names[0]
    if param is None:
        return None
    if code == "unsupported_value":
        kind = "value"
    replacement = _REPLACEMENT.search(message)
    values: tuple[str, ...] = ()
    listed = _SUPPORTED_VALUES.search(message)
    if listed is not None:
        values = tuple(re.findall(r"'([^']+)'", listed.group(1)))
    return Unsupported(
        param=param,
        kind=kind,
        message=" ".join(message.split())[:300],
        replacement=replacement.group(1) if replacement else None,
        supported_values=values,
    )


@dataclass(frozen=True)
class Adjustment:
    """What to do with a parameter from now on: leave it out, send it under another name, or send
    another value."""

    param: str
    action: Literal["omit", "rename", "value"]
    to: str | None
    reason: str


def adjustment_for(unsupported: Unsupported, sent_value: Any) -> Adjustment | None:
    """The adjustment that answers `unsupported`, or None when the harness must not adapt it."""
    param = unsupported.param
    if param not in ADAPTABLE:
        return None
    reason = unsupported.message
    if param in TOKEN_FIELDS:
        other = TOKEN_FIELDS[1] if param == TOKEN_FIELDS[0] else TOKEN_FIELDS[0]
        target = unsupported.replacement if unsupported.replacement in TOKEN_FIELDS else other
        return Adjustment(param, "rename", target, reason)
    if (
        param in ("reasoning_effort", "reasoning.effort")
        and unsupported.kind == "value"
        and unsupported.supported_values
    ):
        value = nearest_effort(str(sent_value), unsupported.supported_values)
        return Adjustment(param, "value", value, reason)
    return Adjustment(param, "omit", None, reason)


class LearnedParams:
    """Adjustments learned per (endpoint, model), safe to share between threads and tasks."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_endpoint: dict[str, dict[str, Adjustment]] = {}
        self._counts: dict[tuple[str, str], int] = {}

    def for_endpoint(self, endpoint: str) -> dict[str, Adjustment]:
        with self._lock:
            return dict(self._by_endpoint.get(endpoint, {}))

    def learn(self, endpoint: str, adjustment: Adjustment) -> None:
        with self._lock:
            self._by_endpoint.setdefault(endpoint, {})[adjustment.param] = adjustment
            key = (endpoint, adjustment.param)
            self._counts[key] = self._counts.get(key, 0) + 1

    def describe(self) -> list[dict[str, Any]]:
        """For the manifest: every adjustment, where it applies and how many 400s taught it."""
        with self._lock:
            return [
                {
                    "endpoint": endpoint,
                    **asdict(adjustment),
                    "rejections": self._counts.get((endpoint, param), 0),
                }
                for endpoint, adjustments in sorted(self._by_endpoint.items())
                for param, adjustment in sorted(adjustments.items())
            ]
