"""Settings of one `expvid build` run, with the paper's values as defaults (and where each comes from)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from expvid.construction.accounting import Price
from expvid.construction.build_settings import BuildSettings
from expvid.construction.timeline import DEFAULT_MAX_PAD, DEFAULT_TOLERANCE

#: Version of what a saved stage holds; part of every stage fingerprint, so a stage saved by an older
#: version is redrafted (from the response cache: nothing is paid). 2: draft keys and content digests.
STAGE_FORMAT = 2
#: The suite that reads this recipe's output (`expvid eval --data OUT`); the audit gate reads it with it.
RELEASE_SUITE = "expvid"


class CurationSettings(BaseModel):
    """ExpVid 3.1: mean of five 0-5 criteria at least 4, none below 3.5, durations in the IQR, top K."""

    model_config = ConfigDict(frozen=True)

    min_mean: float = 4.0
    min_criterion: float = 3.5
    #: Explicit duration bounds (seconds); when both are None the collection's interquartile range is used.
    min_duration: float | None = None
    max_duration: float | None = None
    #: Experiments kept per discipline, best mean score first (the paper keeps 30 of each of 13).
    top_k: int = Field(default=30, ge=1)


class BuildConfig(BuildSettings):
    """The ExpVid recipe's settings (`expvid build`)."""

    #: Optional captioner of Level-1 clips (the paper's Qwen caption; it also checks that an operation
    #: is visible, G.1.6); None: the clips are not captioned.
    vlm: str | None = None
    curation: CurationSettings = CurationSettings()
    #: Drafting: temperature, token cap, attempts per call (1 + retries with feedback).
    temperature: float = 0.0
    max_tokens: int = 8192
    max_attempts: int = Field(default=3, ge=1)
    concurrency: int = Field(default=8, ge=1)
    seed: int = 0
    #: Which levels to draft (Level 3 trims with Level 2's steps, so without Level 2 it is not trimmed).
    levels: tuple[int, ...] = (1, 2, 3)
    #: Level 1: sentence clips (3.1: about 8 s on average), targets per entity kind per sentence.
    sentence_min_words: int = 3
    sentence_max_seconds: float = 20.0
    min_clip_seconds: float = 1.0
    targets_per_sentence: int = Field(default=1, ge=1)
    min_alignment: int = Field(default=3, ge=1, le=5)
    vlm_frames: int = Field(default=8, ge=1)
    #: Level 2: stage length (G.2.1 rule 1) and timestamp checking (see `timeline.py`).
    segment_min_seconds: float = 20.0
    segment_max_seconds: float = 60.0
    timestamp_tolerance: float = DEFAULT_TOLERANCE
    max_pad: float = DEFAULT_MAX_PAD
    #: Level 3: questions of each type, trimming of the concluding part after the last step.
    level3_questions: int = Field(default=2, ge=1)
    trim_slides: bool = False
    #: Audits: text-only samples per item (0 turns the blind audit off), their temperature, the margin
    #: over chance that flags an item, and the ASR-leakage audit switch.
    blind_samples: int = Field(default=3, ge=0)
    blind_temperature: float = 1.0
    blind_margin: float = 0.25
    asr_audit: bool = True
    #: Step ordering: rebuild the model's distractors when the option set gives the answer away
    #: (`ordering.py`); off keeps the model's distractors (and the audit flags them).
    repair_ordering: bool = True
    #: Implausible-distractor audit (MiniLM similarity of each distractor to the experiment's domain).
    domain_audit: bool = True
    #: Level 2: the model's context window (tokens). G.2.1 gets the transcript in windows that fit it
    #: with the prompt and `max_tokens` of reply (`windows.py`).
    context_tokens: int = Field(default=32768, ge=2048)
    #: Parallel worker processes for clip cutting (one source video per process, one decode pass each);
    #: None = the usable cores.
    jobs: int | None = Field(default=None, ge=1)
    #: Encoder threads per clip (x264; 0 = FFmpeg's automatic count). None: chosen with `jobs`
    #: (`context.clip_threads`, measured in benchmarks/build_clips.py).
    clip_threads: int | None = Field(default=None, ge=0)
    #: Failed units are asked again (a fresh request) on a re-run; False replays their cached replies.
    retry_failed: bool = True
    #: Stages to draft again from scratch with fresh requests (`retries.REDO_STAGES`).
    redo: tuple[str, ...] = ()
    #: Stop after curation (write curation.csv for a human review); the next run continues from it.
    review: bool = False
    #: Clip encoding.
    preset: str = "veryfast"
    crf: int = 23

    @model_validator(mode="after")
    def _check(self) -> BuildConfig:
        if not self.levels or not set(self.levels) <= {1, 2, 3}:
            raise ValueError(f"levels must be a non-empty subset of 1, 2, 3, got {list(self.levels)}")
        if self.segment_min_seconds >= self.segment_max_seconds:
            raise ValueError("segment_min_seconds must be below segment_max_seconds")
        bounds = (self.curation.min_duration, self.curation.max_duration)
        if None not in bounds and bounds[0] >= bounds[1]:  # type: ignore[operator]
            raise ValueError("min_duration must be below max_duration")
        return self

    def effective_prices(self) -> dict[str, Price]:
        """The price table with the blind role priced like the drafting model when it IS that model."""
        prices = dict(self.prices)
        if "blind" not in prices and "llm" in prices and (self.blind_llm in (None, self.llm)):
            prices["blind"] = prices["llm"]
        return prices

    def fingerprint(self, *parts: Any) -> str:
        """Hash of the settings that change what a stage produces, plus `parts` (prompt hashes, files,
        model names). Model specs are left out: their server URL does not change an answer."""
        relevant = self.model_dump(
            mode="json",
            exclude={"sources", "out", "llm", "vlm", "stt", "backend_options", "prices", "concurrency", "blind_llm",
                     "blind_samples", "blind_temperature", "blind_margin", "asr_audit", "levels",
                     "domain_audit", "jobs", "clip_threads", "retry_failed", "redo", "review"},
        )  # fmt: skip
        payload = json.dumps([STAGE_FORMAT, relevant, *parts], sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:20]
