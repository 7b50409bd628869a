"""Long transcripts for G.2.1: windows that fit the model's context, cut in the narration's pauses.

G.2.1 segments "the whole timestamped transcript" in one request. A two-hour protocol narrated at
150 words a minute does not fit a 32k-token model with room for the reply, and a request that does not
fit fails (HTTP 400) or is silently truncated by the server. So the transcript is split by length into
windows of whole cues that fit `context_tokens` minus the reply (`max_tokens`), the prompt around the
transcript, and a re-ask's echoed reply; each window is segmented on its own, and the segments are
merged in time order (then checked for overlap across windows like any others).

Windows are of about equal length (the fewest that fit), each ending at the longest pause between two
cues near its even share: stage boundaries fall in pauses, so a stage is rarely split between two
windows (if it is, each half is judged on its own 20-60 s rule).
Token counts are estimated, not measured (the served model's tokenizer is not known here), at a
conservative 3 characters per token (English text averages about 4).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from expvid.construction.llm import ECHO_LIMIT
from expvid.construction.timeline import timestamped_lines
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
    """Consecutive runs of whole cues whose timestamped lines fit `budget_chars` (one when all fit).

    The transcript gets the fewest windows that fit, of about equal length (so no window is a short
    leftover that cannot hold a 20-60 s stage), each ending at the longest pause within
    `TAIL_SHARE` of a window's length around its even share.
    """
    cue_list = list(cues)
    sizes = [len(timestamped_lines([cue])) + 1 for cue in cue_list]
    total = sum(sizes)
    if total <= budget_chars:
        return [cue_list]
    ends = list(itertools.accumulate(sizes))  # ends[i]: characters up to and including cue i
    count = math.ceil(total / budget_chars)
    windows: list[list[Cue]] = []
    start = 0
    while start < len(cue_list):
        remaining = count - len(windows)
        used = ends[start - 1] if start else 0
        if remaining <= 1 or total - used <= budget_chars:
            windows.append(cue_list[start:])
            break
        share = (total - used) / remaining
        fits = [k for k in range(start + 1, len(cue_list)) if ends[k - 1] - used <= budget_chars]
        if not fits:  # a single cue longer than the budget goes alone
            fits = [start + 1]
        near = [k for k in fits if abs((ends[k - 1] - used) - share) <= TAIL_SHARE * share] or fits[-1:]
        cut = max(near, key=lambda k: (_pause_before(cue_list, k), -abs((ends[k - 1] - used) - share)))
        windows.append(cue_list[start:cut])
        start = cut
    return windows


def _pause_before(cues: list[Cue], index: int) -> float:
    if index <= 0 or index >= len(cues):
        return -1.0
    return cues[index].start - cues[index - 1].end
