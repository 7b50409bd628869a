"""Settings of `expvid build --recipe scivideobench`, with where each default comes from."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from expvid.construction.build_settings import BuildSettings

#: `--redo STAGE[:ID]` of this recipe -> the build phase whose calls (and saved outputs) it redoes;
#: the semantics are the ExpVid build's (`expvid.construction.retries`): a new epoch of the stage,
#: every call of it asked afresh once, later runs reuse the redone stage.
REDO_PHASES: dict[str, str] = {
    "transcription": "transcription",
    "generator": "svb_generate",
    "evaluator": "svb_evaluate",
    "comparer": "svb_compare",
    "refiner": "svb_refine",
    "blind": "blind_audit",
}
REDO_STAGES = tuple(REDO_PHASES)
#: The suite that reads this recipe's output (`expvid eval --suite scivideobench`); the audit gate reads it with it.
RELEASE_SUITE = "scivideobench"

QUESTION_TYPES: dict[str, str] = {
    "conceptual": "Conceptual Reasoning",
    "hypothetical": "Hypothetical Reasoning",
    "quantitative": "Quantitative Reasoning",
}


class SvbBuildConfig(BuildSettings):
    """The SciVideoBench recipe's settings (`expvid build --recipe scivideobench`)."""

    #: Questions the generator writes per experiment and type (the release averages ~4 per video).
    per_type: dict[str, int] = Field(default_factory=lambda: dict.fromkeys(QUESTION_TYPES, 2))
    #: Replacement exemplar set (JSON: {type: [{question, answer}]}); None = the bundled one.
    exemplars: Path | None = None
    #: Replacement prompt files (`prompts.py`).
    prompts: Path | None = None
    #: Frames the evaluator and the comparer see (uniform over the video, each labelled with its time).
    frames: int = Field(default=16, ge=1)
    #: What the QA generator sees of the video (section 2.2: "video, transcript, and associated paper
    #: text"): "frames" (the same labelled frames as the evaluator), "video" (those frames as one
    #: video, for models that take video), or "text" (transcript and paper only: cheaper).
    generator: Literal["frames", "video", "text"] = "frames"
    #: Replacement discipline labels (JSON {label: Biology | Chemistry | Medicine | Physics}), on top
    #: of SciVideoBench's own: its four disciplines and the subjects its appendix B lists under them.
    disciplines: Path | None = None
    frame_max_side: int = Field(default=448, ge=64)
    #: Paper text sent with the prompts (characters; the head of the paper Markdown).
    paper_chars: int = Field(default=24_000, ge=0)
    #: Quantitative distractors: the Gaussian scale, sigma = noise x |answer| (section 2.2: "adding
    #: appropriate Gaussian noise to the correct answer"); drawn so that the answer's rank is uniform,
    #: on the answer's grid, no two within a display step (`numeric_options.py`).
    noise: float = Field(default=0.2, gt=0)
    blind_samples: int = Field(default=3, ge=0)
    blind_temperature: float = 1.0
    blind_margin: float = 0.25
    #: Narration leakage: the correct option's share of narration-matched question words minus the
    #: best distractor's (the ExpVid audit's rule).
    leak_margin: float = 0.5
    temperature: float = 0.0
    max_tokens: int = 8192
    max_attempts: int = Field(default=3, ge=1)
    concurrency: int = Field(default=8, ge=1)
    retry_failed: bool = True
    #: Stages to do again with fresh requests: `STAGE` or `STAGE:EXPERIMENT_ID` (`REDO_STAGES`).
    redo: tuple[str, ...] = ()

    @field_validator("redo")
    @classmethod
    def _redo(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        from expvid.construction.retries import redo_problem

        for entry in value:
            problem = redo_problem(entry, REDO_STAGES)
            if problem is not None:
                raise ValueError(problem)
        return value

    def redo_phases(self) -> list[str]:
        """`redo` in the build's phase names (`generator:61842` -> `svb_generate:61842`)."""
        phases = []
        for entry in self.redo:
            stage, sep, experiment = entry.partition(":")
            phases.append(f"{REDO_PHASES[stage]}{sep}{experiment}")
        return phases

    @field_validator("per_type")
    @classmethod
    def _types(cls, value: dict[str, int]) -> dict[str, int]:
        unknown = sorted(set(value) - set(QUESTION_TYPES))
        if unknown or any(v < 0 for v in value.values()) or not any(value.values()):
            raise ValueError(
                f"per_type needs counts >= 0 for {', '.join(QUESTION_TYPES)} (some > 0), got {value}"
            )
        return {t: int(value.get(t, 0)) for t in QUESTION_TYPES}

    def fingerprint(self, *parts: Any) -> str:
        """Settings that change what a stage produces (not where models run or how much is spent)."""
        relevant = self.model_dump(
            mode="json",
            exclude={
                "sources",
                "out",
                "llm",
                "blind_llm",
                "stt",
                "backend_options",
                "prices",
                "concurrency",
                "blind_samples",
                "blind_temperature",
                "blind_margin",
                "leak_margin",
                "retry_failed",
                "redo",
                "disciplines",  # the placed discipline is part of each experiment's stamp
            },
        )
        payload = json.dumps([relevant, *parts], sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:20]


def backend_options(config: SvbBuildConfig, cache_dir: Any) -> dict[str, Any]:
    """Options of the drafting model's backend: with `-R generator=video` it must take videos."""
    options = {"concurrency": config.concurrency, **config.backend_options, "cache_dir": cache_dir}
    if config.generator == "video":
        options["input_mode"] = "video"
    return options
