"""A paper's graded LLM judge: what the paper fixes, declared once per suite; what a run may change.

The paper fixes the judge's protocol (its name family, how it is described, the official token
limit, the prompt texts and how its reply is read); a run may change the backend, the token limit
(a reasoning judge needs room), the seed, the prompt texts and the name. A suite's judge subclasses
`PaperJudge`, declares the fixed parts as class attributes and methods, and adds its `decide(...)`;
the call itself (budget, failures, description) is the shared `GradedLLMJudge`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from expvid.models.types import ModelBackend
from expvid.scoring.judges.graded import GradedLLMJudge, GradedParseError


class PaperJudge(GradedLLMJudge):
    """A `GradedLLMJudge` whose protocol is its class's (see the module docstring)."""

    #: The judge is named "<family>:<backend name>" unless a run names it.
    family: ClassVar[str]
    #: The protocol as the judge's description states it.
    protocol_text: ClassVar[str]
    #: The official limit on the judge's reply.
    official_max_tokens: ClassVar[int]
    #: What its requests are labelled in caches and logs.
    purpose_label: ClassVar[str]
    #: What `read_reply` raises for a reply that states no score.
    reply_errors: ClassVar[tuple[type[Exception], ...]] = (GradedParseError,)
    #: Protocol facts added to the description (e.g. that the judge never sees a frame).
    facts: ClassVar[Mapping[str, Any]] = {}

    def __init__(
        self,
        backend: ModelBackend,
        *,
        max_tokens: int | None = None,
        seed: int = 0,
        template: str | None = None,
        system: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(
            backend,
            name=name or f"{self.family}:{backend.name}",
            protocol=self.protocol_text,
            template=template if template is not None else self.default_template(),
            system=system if system is not None else self.default_system(),
            parse=self.read_reply,
            parse_errors=self.reply_errors,
            max_tokens=max_tokens if max_tokens is not None else self.official_max_tokens,
            seed=seed,
            purpose=self.purpose_label,
            described=self.facts,
        )

    def default_template(self) -> str:
        """The paper's user prompt template."""
        raise NotImplementedError

    def default_system(self) -> str | None:
        """The paper's system prompt, if it sends one."""
        return None

    def read_reply(self, reply: str | None) -> float:
        """The score the reply states; one of `reply_errors` when it states none."""
        raise NotImplementedError
