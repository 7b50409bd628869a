"""Which speech-to-text engine, model and options: `--stt faster-whisper:MODEL` or `--stt openai:MODEL@URL`.

`key()` hashes only what changes the text (engine, model identity, language, timestamps, decoding
options), never where the server runs or which key pays, so a transcript made through one endpoint is
reused through another. A local model given as a folder is identified by its files' content
(config, vocabulary, size of the weights), not by its path.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Engine = Literal["faster-whisper", "openai"]
ENGINES: tuple[str, ...] = ("faster-whisper", "openai")


class SpeechSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    engine: Engine
    #: faster-whisper: a model name ("small", "large-v3") or a CTranslate2 folder; openai: the model id.
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    #: ISO code ("en") or None to let the model detect it (recorded either way).
    language: str | None = None
    word_timestamps: bool = True
    beam_size: int = Field(default=5, ge=1)
    #: faster-whisper's temperature fallback; (0.0,) decodes greedily once.
    temperatures: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
    vad_filter: bool = False
    device: str = "cpu"
    compute_type: str = "default"
    #: Remote: USD per minute of audio (OpenAI whisper-1: 0.006); None = unknown, never 0.
    price_per_minute: float | None = None
    #: Remote uploads above this are split at quiet moments (OpenAI accepts 25 MB).
    max_upload_mb: float = Field(default=25.0, gt=0.1)
    timeout_s: float = 600.0
    max_retries: int = Field(default=4, ge=0)

    @property
    def remote(self) -> bool:
        return self.engine == "openai"

    def model_identity(self) -> str:
        path = Path(self.model).expanduser()
        if self.engine == "faster-whisper" and path.is_dir():
            digest = hashlib.sha256()
            for name in ("config.json", "vocabulary.json", "vocabulary.txt", "tokenizer.json"):
                file = path / name
                if file.is_file():
                    digest.update(name.encode() + b"\0" + file.read_bytes())
            weights = path / "model.bin"
            digest.update(str(weights.stat().st_size if weights.is_file() else -1).encode())
            return f"ct2:{digest.hexdigest()[:16]}"
        return self.model

    def describe(self) -> dict[str, object]:
        """Engine, model and options as provenance records them (no URL, no key)."""
        return {
            "engine": self.engine,
            "model": self.model if self.remote else Path(self.model).name or self.model,
            "model_identity": self.model_identity(),
            "language_requested": self.language,
            "word_timestamps": self.word_timestamps,
            **(
                {}
                if self.remote
                else {
                    "beam_size": self.beam_size,
                    "temperatures": list(self.temperatures),
                    "vad_filter": self.vad_filter,
                }
            ),
        }

    def key(self) -> str:
        payload = json.dumps(self.describe(), sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def parse_stt_spec(spec: str, **options: object) -> SpeechSettings:
    """`faster-whisper:MODEL_OR_PATH` or `openai:MODEL@BASE_URL` (base URL default: OpenAI's)."""
    engine, sep, rest = spec.strip().partition(":")
    if not sep or not rest or engine not in ENGINES:
        raise ValueError(
            f"speech-to-text spec {spec!r}: expected faster-whisper:MODEL (name or folder) or "
            "openai:MODEL@URL (any OpenAI-compatible /v1/audio/transcriptions server)"
        )
    model, base_url = rest, None
    if engine == "openai":
        model, _, base_url = rest.partition("@")
        base_url = base_url or "https://api.openai.com/v1"
        if not model:
            raise ValueError(f"speech-to-text spec {spec!r}: the model name is missing (openai:MODEL@URL)")
    values = {key: value for key, value in options.items() if value is not None}
    return SpeechSettings(engine=engine, model=model, base_url=base_url, **values)
