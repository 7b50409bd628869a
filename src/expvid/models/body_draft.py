"""One attempt's request body as it is built, with the record of what it sends and what it leaves out.

Shared by the two OpenAI wire formats (Chat Completions in `openai_wire`, the Responses API in
`responses_wire`): both decide each parameter from the model's known rules and from what this
endpoint's 400s taught, and both record every decision in the prediction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from expvid.models.param_fallback import Adjustment
from expvid.models.param_rules import ChatRules
from expvid.models.types import GenerateRequest


@dataclass
class BodyDraft:
    """The body of one attempt at `request` being built: `sent` records what goes out, `not_sent`
    what is left out and why. `rules` are the model's known parameter rules; `adjustments` what this
    endpoint's 400s taught; `extra_body` the user's own fields, merged last (`finish`).
    """

    request: GenerateRequest
    model: str
    rules: ChatRules
    adjustments: Mapping[str, Adjustment]
    extra_body: Mapping[str, Any] | None
    body: dict[str, Any] = field(default_factory=dict)
    sent: dict[str, Any] = field(default_factory=dict)
    not_sent: dict[str, str] = field(default_factory=dict)

    def send(self, name: str, value: Any) -> None:
        """Put `name` in the body and record it as sent under the same name."""
        self.body[name] = value
        self.sent[name] = value

    def refused(self, name: str) -> bool:
        """Whether this endpoint refused the parameter `name` (a 400 taught it); if so, say why."""
        learned = self.adjustments.get(name)
        if learned is None:
            return False
        self.not_sent[name] = learned.reason
        return True

    def adjusted_effort(self, name: str, effort: str | None) -> str | None:
        """The reasoning effort after what this endpoint's 400s taught about the parameter `name`: None
        (with the reason in `not_sent`) when it must be left out, the accepted value when one was refused."""
        adjusted = self.adjustments.get(name)
        if adjusted is None or effort is None:
            return effort
        if adjusted.action == "omit":
            self.not_sent[name] = adjusted.reason
            return None
        if adjusted.action == "value" and adjusted.to:
            return adjusted.to
        return effort

    def set_temperature(self, effort: str | None) -> None:
        """Send the request's temperature unless the model refuses one (at this effort): then say why."""
        reason = self._temperature_blocked(effort)
        if reason is None:
            self.send("temperature", self.request.temperature)
        else:
            self.sent["temperature"] = None
            self.not_sent["temperature"] = reason

    def _temperature_blocked(self, effort: str | None) -> str | None:
        """Why the temperature is not sent, or None when it is."""
        learned = self.adjustments.get("temperature")
        if learned is not None:
            return f"server refused it: {learned.reason}"
        if self.rules.temperature == "omit":
            return self.rules.temperature_reason or "not settable for this model"
        if self.rules.temperature == "omit_with_reasoning" and effort not in (None, "none"):
            return self.rules.temperature_reason or "not settable with reasoning"
        return None

    def finish(self, recorded: Sequence[str]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The body and its record, with the user's `extra_body` merged last; for the `recorded` names
        its explicit value is what went out (and no longer "not sent"). `sent` gets the reasons for
        what was left out."""
        extra_body = self.extra_body
        if extra_body:
            self.body.update(extra_body)
            for name in recorded:
                if name in extra_body:
                    self.sent[name] = extra_body[name]
                    self.not_sent.pop(name, None)
        if self.not_sent:
            self.sent["not_sent"] = self.not_sent
        return self.body, self.sent
