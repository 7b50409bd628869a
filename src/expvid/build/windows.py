"""Long transcripts for G.2.1: windows that fit the model's context, cut in the narration's pauses.

G.2.1 segments "the whole timestamped transcript" in one request. A two-hour protocol narrated at
150 words a minute does not fit a 32k-token model with room for the reply, and a request that does not
fit fails (HTTP 400) or is silently truncated by the server. So the transcript is split by length into
windows of whole cues that fit `context_tokens` minus the reply (`max_tokens`), the prompt around the
transcript, and a re-ask's echoed reply; each window is segmented on its own, and the segments are
merged in time order (then checked for overlap across windows like any others).

A window ends at the longest pause between two cues in its last 30 %: stage boundaries fall in pauses,
so a stage is rarely split between two windows (if it is, each half is judged on its own 20-60 s rule).
Token counts are estimated, not measured (the served model's tokenizer is not known here), at a
conservative 3 characters per token (English text averages about 4).
"""

from __future__ import annotations

from collections.abc import Sequence

from expvid.build.llm import ECHO_LIMIT
from expvid.build.timeline import timestamped_lines
from expvid.media.transcript_model import Cue

CHARS_PER_TOKEN = 3.0
#: Room for the retry feedback message (`prompts/retry_feedback.txt` with a problem description).
FEEDBACK_TOKENS = 600
#: A window ends in the last part of what fits, at the longest pause there.
TAIL_SHARE = 0.3


def estimate_tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + 1


def transcript_budget(context_tokens: int, max_tokens: int, prompt_tokens: int) -> int:
    """Characters of timestamped transcript one request may carry; ValueError when nothing fits."""
    tokens = context_tokens - max_tokens - prompt_tokens - FEEDBACK_TOKENS - estimate_tokens("x" * ECHO_LIMIT)
    if tokens < 500:
        raise ValueError(
            f"a context of {context_tokens} tokens leaves no room for the transcript after {max_tokens} "
            f"reply tokens and a {prompt_tokens}-token prompt; raise --context-tokens or lower --max-tokens"
        )
    return int(tokens * CHARS_PER_TOKEN)


def transcript_windows(cues: Sequence[Cue], budget_chars: int) -> list[list[Cue]]:
    """Consecutive runs of whole cues whose timestamped lines fit `budget_chars` (one when all fit)."""
    cue_list = list(cues)
    sizes = [len(timestamped_lines([cue])) + 1 for cue in cue_list]
    if sum(sizes) <= budget_chars:
        return [cue_list]
    windows: list[list[Cue]] = []
    start = 0
    while start < len(cue_list):
        end, used = start, 0
        while end < len(cue_list) and used + sizes[end] <= budget_chars:
            used += sizes[end]
            end += 1
        if end == len(cue_list):
            windows.append(cue_list[start:])
            break
        end = max(end, start + 1)  # a single cue longer than the budget goes alone
        low = start + max(1, int((end - start) * (1 - TAIL_SHARE)))
        cut = max(range(low, end + 1), key=lambda k: (_pause_before(cue_list, k), k)) if low <= end else end
        cut = min(max(cut, start + 1), len(cue_list))
        windows.append(cue_list[start:cut])
        start = cut
    return windows


def _pause_before(cues: list[Cue], index: int) -> float:
    if index <= 0 or index >= len(cues):
        return -1.0
    return cues[index].start - cues[index - 1].end
