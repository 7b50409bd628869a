"""The ExpVid recipe's declarations (sections 3.1-3.3 and appendix G of the ExpVid paper)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from expvid.construction.recipes.speech_settings import EXPERIMENT_INPUTS, SPEECH_SETTINGS
from expvid.construction.retries import REDO_STAGES
from expvid.recipes.api import (
    BuildRequest,
    BuiltRelease,
    Recipe,
    RecipeError,
    RecipeJudge,
    RecipeSample,
)


def speech_sample(directory: Path, seed: int, force: bool) -> RecipeSample:
    """Narrated videos, papers and metadata and no transcripts: what speech-to-text is for."""
    from expvid.suites.sample.narration import NarrationError
    from expvid.suites.sample.speech_sources import SpeechSourcesError, make_speech_sources

    try:
        made = make_speech_sources(directory, seed, force=force)
    except (SpeechSourcesError, NarrationError) as error:
        raise RecipeError(str(error)) from None
    return RecipeSample(
        sources=made.root / "sources",
        what=f"{len(made.experiments)} narrated videos ({made.audio_seconds / 60:.1f} min of speech), papers, "
        "no transcripts (build with -R stt=faster-whisper:MODEL or -R stt=openai:MODEL@URL)",
        seconds=made.seconds,
    )


class ExpVidRecipe(Recipe):
    """ExpVid: curation, three levels of questions from video, transcript and paper, leakage audits."""

    name = "expvid"
    title = "ExpVid: curation and Level-1/2/3 questions with leakage audits"
    paper = "ExpVid, sections 3.1-3.3 and appendix G"
    inputs = EXPERIMENT_INPUTS
    stages = REDO_STAGES
    settings = SPEECH_SETTINGS
    review_page = "levels"
    export_format = "expvid"
    release_suite = "expvid"
    judges = (
        RecipeJudge("blind audit", "a text-only model answers each item without the video (--blind-llm)"),
        RecipeJudge("alignment", "the VLM's G.1.6 score of an operation question against its clip (--vlm)"),
    )
    docs = "build.md"

    def build(self, request: BuildRequest) -> BuiltRelease | None:
        from expvid.construction.recipes.expvid.command import build_expvid

        values: dict[str, Any] = {k: v for k, v in request.flags.items() if k != "accept_audit"}
        return build_expvid(**values)

    def make_sample(self, directory: Path, seed: int, *, force: bool = False) -> RecipeSample:
        return speech_sample(directory, seed, force)
