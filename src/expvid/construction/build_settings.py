"""The settings every experiment-video recipe's build starts with (the recipes that draft from lab videos and their transcripts extend it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from expvid.construction.accounting import Price
from expvid.construction.speech.settings import SpeechSettings


class BuildSettings(BaseModel):
    """Where the sources are and the candidates go, the drafting model and the blind audit's, how
    models are reached and priced, and speech-to-text; a recipe's config adds its own settings."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    sources: Path
    out: Path
    llm: str
    #: Text-only model of the blind audit; None means the drafting model.
    blind_llm: str | None = None
    backend_options: dict[str, Any] = Field(default_factory=dict)
    prices: dict[str, Price] = Field(default_factory=dict)
    #: Speech-to-text for experiments with a video and no transcript (Whisper over the narration, as
    #: one recipe's paper does; `expvid.construction.speech`); None: such experiments are rejected
    #: ("no transcript"). Not in stage fingerprints: the transcript it makes is, by content.
    stt: SpeechSettings | None = None
