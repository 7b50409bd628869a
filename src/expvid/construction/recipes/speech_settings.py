"""The speech-to-text settings every recipe that transcribes shares (`-R stt=...`), as declarations
for `expvid recipes show` (`expvid.construction.recipes.speech_options` reads them)."""

from __future__ import annotations

from expvid.recipes.api import RecipeInput, RecipeSetting

SPEECH_SETTINGS = (
    RecipeSetting(
        "stt", str, None, "speech-to-text for videos without a transcript: faster-whisper:MODEL_OR_FOLDER or "
        "openai:MODEL@URL",
    ),
    RecipeSetting("stt_price", float, None, "USD per minute of audio, for the cost estimate", minimum=0),
    RecipeSetting("stt_language", str, None, "the narration's language (ISO code); default: detected"),
    RecipeSetting("stt_api_key_env", str, None, "environment variable holding the speech API's key"),
    RecipeSetting("stt_beam_size", int, None, "beam size of faster-whisper", minimum=1),
)  # fmt: skip

#: The experiment folders ExpVid's construction reads (and recipes built on its curation).
EXPERIMENT_INPUTS = (
    RecipeInput("<id>/video.mp4", "the experiment's video (or video_url in meta.json)"),
    RecipeInput(
        "<id>/transcript.vtt",
        "the narration with times (.vtt, .srt or .json); without one, -R stt=... transcribes the video",
        required=False,
    ),
    RecipeInput("<id>/paper.md", "the paper the experiment belongs to (Markdown or PDF)", required=False),
    RecipeInput("<id>/meta.json", "title, discipline and the other metadata of the experiment"),
)
