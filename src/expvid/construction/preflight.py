"""Checks that need no model and would otherwise fail after money was spent: run before the first call.

A context window too small for a transcript used to show up after curation was paid for, as a
traceback from the Level-2 windowing. Both requests that carry a whole transcript are checked here,
for every experiment curation will score, with the same token estimate the build uses (`windows.py`,
3 characters per token, room for the reply and a re-ask):

- curation (`transcript_quality`) sends the whole transcript in one request: prompt and reply must fit
  (a re-ask that no longer fits fails as a unit, like any other);
- Level-2 segmentation (G.2.1) sends it in windows of whole cues; the settings must leave room for a
  window at all, and no single cue may be longer than a window.

A failure is a `DataError` (exit 2) with one line naming the file and the numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

from expvid.construction.config import BuildConfig
from expvid.construction.context import LoadedExperiment
from expvid.construction.prompts import load_prompt
from expvid.construction.timeline import format_time, timestamped_lines
from expvid.construction.windows import estimate_tokens, transcript_budget
from expvid.schema import DataError


def _prompt_tokens(prompt_id: str, **values: str) -> int:
    prompt = load_prompt(prompt_id)
    system, user = prompt.fill(**{name: values.get(name, "") for name in prompt.placeholders})
    return estimate_tokens((system or "") + user)


def check_context(config: BuildConfig, experiments: Sequence[LoadedExperiment]) -> None:
    """`DataError` (one line) when a transcript cannot fit `context_tokens`; see the module docstring."""
    context, reply = config.context_tokens, config.max_tokens
    budget: int | None = None
    if 2 in config.levels:
        try:
            budget = transcript_budget(context, reply, _prompt_tokens("g2_1_clip_segmentation"))
        except ValueError as error:
            raise DataError(f"--context-tokens {context}: {error}") from None
    for experiment in experiments:
        transcript = experiment.transcript
        if transcript is None or experiment.duration is None:
            continue
        where = experiment.source.transcript or experiment.source.folder
        needed = (
            _prompt_tokens(
                "transcript_quality",
                title=experiment.source.title,
                discipline=experiment.source.discipline,
                video_duration=f"{format_time(experiment.duration)} ({experiment.duration:.1f} s)",
                n_cues=str(len(transcript.cues)),
                timestamped_transcript=timestamped_lines(transcript.cues),
            )
            + reply
        )
        if needed > context:
            raise DataError(
                f"{where}: curation sends the whole transcript in one request, which needs about {needed} "
                f"tokens with {reply} reply tokens; --context-tokens is {context} "
                "(raise it, lower --max-tokens, or exclude this experiment from the sources)"
            )
        if budget is not None:
            longest = max(transcript.cues, key=lambda cue: len(timestamped_lines([cue])))
            size = len(timestamped_lines([longest])) + 1
            if size > budget:
                raise DataError(
                    f"{where}: the cue at {format_time(longest.start)} is {size} characters, longer than the "
                    f"{budget} characters of transcript a segmentation request can carry with "
                    f"--context-tokens {context} and --max-tokens {reply}"
                )
