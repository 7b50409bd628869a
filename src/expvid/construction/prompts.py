"""The build's prompt templates: loaded from `prompts/*.txt`, hashed, and filled by plain substitution.

Templates hold literal JSON (`{ "materials": [...] }`), so `str.format` cannot fill them; a placeholder
is `{name}` with a lower-case identifier and nothing else, and filling checks that every placeholder
of the template gets a value and that no unknown value is passed (a typo fails at once, not as a
prompt silently missing its transcript). Each template has a `sha256` recorded in item provenance, so
a reviewer can tell which wording drafted an item.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")

#: Prompt id -> (file stem, source) for every template the pipeline uses.
PROMPTS: dict[str, str] = {
    "g1_1_material_extraction": "ExpVid appendix G.1.1",
    "g1_2_material_mcq": "ExpVid appendix G.1.2",
    "g1_3_tool_extraction": "ExpVid appendix G.1.3",
    "g1_4_tool_mcq": "ExpVid appendix G.1.4",
    "g1_5_quantity_mcq": "ExpVid appendix G.1.5",
    "g1_6_operation_alignment": "ExpVid appendix G.1.6",
    "g1_7_operation_mcq": "ExpVid appendix G.1.7",
    "g2_1_clip_segmentation": "ExpVid appendix G.2.1",
    "g2_2_step_extraction": "ExpVid appendix G.2.2",
    "g2_3_sequence_ordering_mcq": "ExpVid appendix G.2.3",
    "transcript_quality": "expvid (criteria from ExpVid section 3.1)",
    "visual_caption": "expvid (the paper's Qwen captioner prompt is not published)",
    "findings_summary": "expvid (ExpVid section 3.3: findings summarized as anchors)",
    "level3_blanks": "expvid (embeds the Level-3 guidelines of ExpVid Figure 13)",
}

#: Text shown in `{qwen_caption}` when the build runs without a VLM.
NO_CAPTION = "(not available)"


class PromptError(ValueError):
    """A template is missing, or was filled with missing or unknown values."""


@dataclass(frozen=True)
class Prompt:
    """A system (optional) and user template pair."""

    id: str
    system: str | None
    user: str
    source: str

    @property
    def placeholders(self) -> frozenset[str]:
        return frozenset(PLACEHOLDER.findall((self.system or "") + "\n" + self.user))

    @property
    def sha256(self) -> str:
        """Hash of the template text (system, a separator, user): changes whenever the wording does."""
        text = (self.system or "") + "\n\x00\n" + self.user
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def fill(self, **values: str) -> tuple[str | None, str]:
        """(system, user) with every placeholder replaced; `PromptError` on a missing or unknown value."""
        missing = sorted(self.placeholders - values.keys())
        unknown = sorted(values.keys() - self.placeholders)
        if missing or unknown:
            raise PromptError(f"prompt {self.id}: missing values {missing}, unknown values {unknown}")
        return (None if self.system is None else _substitute(self.system, values)), _substitute(
            self.user, values
        )


def _substitute(template: str, values: dict[str, str]) -> str:
    """One pass, so a value that itself contains `{name}` is never filled again."""
    return PLACEHOLDER.sub(lambda m: values[m.group(1)] if m.group(1) in values else m.group(0), template)


def _read(name: str) -> str | None:
    resource = files("expvid.construction").joinpath("prompts", name)
    if not resource.is_file():
        return None
    return resource.read_text(encoding="utf-8").rstrip("\n")


@cache
def load_prompt(prompt_id: str) -> Prompt:
    """The template pair `prompts/<id>.system.txt` (optional) and `prompts/<id>.user.txt`."""
    if prompt_id not in PROMPTS:
        raise PromptError(f"unknown prompt {prompt_id!r}; known: {', '.join(PROMPTS)}")
    user = _read(f"{prompt_id}.user.txt")
    if user is None:
        raise PromptError(f"prompt file prompts/{prompt_id}.user.txt is missing from expvid.construction")
    return Prompt(prompt_id, _read(f"{prompt_id}.system.txt"), user, PROMPTS[prompt_id])


@cache
def text_file(name: str) -> str:
    """A plain text file of `prompts/` (guidelines, retry feedback)."""
    text = _read(name)
    if text is None:
        raise PromptError(f"prompts/{name} is missing from expvid.construction")
    return text


def retry_feedback(error: str, attempt: int, attempts: int) -> str:
    """The message appended after an unusable reply (see `llm.py`). The attempt number makes each
    re-ask a different request, so a cached bad reply is never replayed as the next attempt."""
    values = {"error": error, "attempt": str(attempt), "attempts": str(attempts)}
    return _substitute(text_file("retry_feedback.txt"), values)
