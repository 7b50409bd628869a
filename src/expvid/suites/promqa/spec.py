"""ProMQA as data: question types, table groups, defaults - each with where it comes from.

- Tasks = the eight question types in the column order of Tables 10 and 15: missing, next, order,
  measurement, preparation, technique, temperature, timing. "Avg." is the mean over all examples.
- Breakdowns: clean / noisy (the record's `is_noisy`: errors in previous steps; Tables 10, 15) and
  answer source (Table 16, `answer_tags`): only machine-generated answers, only human-written
  ("annotator" / "adjudicator") answers, or both. Answer TYPE (direct / suggestion / intervention,
  Table 16's right half) is not in the release, so it cannot be reported.
- Inference (official `src/benchmark/predict.py` and `utils.py`): frames at 1 fps from 0 to
  `end_time`, thinned from the end to `max_frames` (the last frame always kept), the text prompt
  FIRST and the frames after it in one user message, temperature 0, at most 128 new tokens.
  Table 10's main rows use 50 frames for GPT-4o and Gemini (10 for Claude, 100 for Qwen2-VL, 8 for
  VideoLLaMA2); 50 is the default here.
- Judge (`src/benchmark/evaluate.py`, template "ternary-step"): GPT-4o (gpt-4o-2024-08-06),
  temperature 0, 256 new tokens; score = mean(0/1/2) x 50.
"""

from __future__ import annotations

from expvid.schema import AnswerType
from expvid.scoring.levels import LevelRule, LevelSpec
from expvid.suites.base import TaskSpec
from expvid.suites.protocol import GenerationDefaults

SUITE = "promqa"
EXAMPLES_FILE = "examples.json"
GRAPHS_FILE = "graphs.json"

#: Question types in Table 10 / 15 column order, with their column labels.
QUESTION_TYPES: tuple[tuple[str, str], ...] = (
    ("missing", "missing"),
    ("next", "next"),
    ("order", "order"),
    ("measurement", "measurement"),
    ("preparation", "preparation"),
    ("technique", "technique"),
    ("temperature", "temperature"),
    ("timing", "timing"),
)
TASKS: tuple[TaskSpec, ...] = tuple(
    TaskSpec(name, None, AnswerType.FREE_TEXT, name.capitalize(), label, EXAMPLES_FILE, "llm_ternary")
    for name, label in QUESTION_TYPES
)
LEVELS: tuple[LevelSpec, ...] = (
    LevelSpec("Avg", tuple(name for name, _ in QUESTION_TYPES), LevelRule.ITEM_WEIGHTED),
)

#: `answer_tags` values that mean a person wrote the answer.
HUMAN_TAGS = frozenset({"annotator", "adjudicator"})
MACHINE_TAG = "machine"
ANSWER_SOURCES: tuple[str, ...] = ("machine", "human", "both")
ERROR_GROUPS: tuple[str, ...] = ("clean", "noisy")

#: Where a recording may live, tried in order ({id} = recording_id).
VIDEO_CANDIDATES: tuple[str, ...] = (
    "videos/{id}.mp4",
    "videos/{id}_4K.mp4",
    "resolution_4k/{id}_4K.mp4",
    "recordings/{id}.mp4",
    "{id}.mp4",
)

DEFAULT_MAX_FRAMES = 50
SAMPLING_FPS = 1.0
GENERATION = GenerationDefaults(
    temperature=0.0, max_tokens=128, source="ProMQA code (src/benchmark/predict.py defaults); §C.2"
)
