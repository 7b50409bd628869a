"""Level-3 blank judges: an LLM judge (the paper's method, our prompt) and an offline stand-in."""

from expvid.scoring.judges.base import BlankJudge, blanks_to_decide, gold_blanks, merge_verdicts
from expvid.scoring.judges.llm_blank import LLMBlankJudge, load_prompt
from expvid.scoring.judges.offline_blank import DEFAULT_THRESHOLD, BlankDecision, OfflineBlankJudge
from expvid.scoring.judges.verdicts import VerdictError, parse_verdicts

__all__ = [
    "DEFAULT_THRESHOLD",
    "BlankDecision",
    "BlankJudge",
    "LLMBlankJudge",
    "OfflineBlankJudge",
    "VerdictError",
    "blanks_to_decide",
    "gold_blanks",
    "load_prompt",
    "merge_verdicts",
    "parse_verdicts",
]
