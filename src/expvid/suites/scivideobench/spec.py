"""SciVideoBench as data: tasks, table groups, discipline mapping, frame settings, defaults.

Every default is written once, here, with where it comes from:
- paper §3.2 and Table 6 (appendix C): frames per model (1 fps for Gemini, 256 for GPT-4o, 768
  for Qwen2.5-VL, 512 for InternVideo2.5, 128 for LongVA, 32 for InternVL3 / LLaVA-OneVision /
  LLaVA-NeXT-Video, 16 for InternVL2); temperature 0.
- official lmms-eval task (`scivideobench.yaml`): greedy decoding, max_new_tokens 16 (its README
  example uses 1024), post prompts per model family.
- Table 2 layout: Overall | Conceptual, Hypothetical, Quantitative | Biology, Chemistry,
  Medicine, Physics. Overall and every group are pooled accuracy over their questions.
"""

from __future__ import annotations

from expvid.schema import AnswerType
from expvid.scoring.levels import LevelRule, LevelSpec
from expvid.suites.base import TaskSpec
from expvid.suites.protocol import FrameOptions, GenerationDefaults

SUITE = "scivideobench"
RELEASE_FILES: tuple[str, ...] = (
    "scivideobench_1k.jsonl",
    "scivideobench_1k.json",
    "scivideobench.jsonl",
    "scivideobench.json",
)
#: Where the official task looks for `jove_{video_id}.mp4` (then .MP4, then .mkv), in our order.
VIDEO_DIRS: tuple[str, ...] = ("videos", "video_with_text_pil", ".")
VIDEO_SUFFIXES: tuple[str, ...] = (".mp4", ".MP4", ".mkv")

#: Raw `question_type` -> task name (also the short column label's source).
QUESTION_TYPES: dict[str, str] = {
    "Conceptual Reasoning": "conceptual",
    "Hypothetical Reasoning": "hypothetical",
    "Quantitative Reasoning": "quantitative",
}

TASKS: tuple[TaskSpec, ...] = (
    TaskSpec(
        "conceptual",
        None,
        AnswerType.CHOICE,
        "Conceptual Reasoning",
        "Conceptual",
        RELEASE_FILES[0],
        "accuracy",
    ),
    TaskSpec(
        "hypothetical",
        None,
        AnswerType.CHOICE,
        "Hypothetical Reasoning",
        "Hypothetical",
        RELEASE_FILES[0],
        "accuracy",
    ),
    TaskSpec(
        "quantitative",
        None,
        AnswerType.CHOICE,
        "Quantitative Reasoning",
        "Quantitative",
        RELEASE_FILES[0],
        "accuracy",
    ),
)
LEVELS: tuple[LevelSpec, ...] = (
    LevelSpec("Overall", ("conceptual", "hypothetical", "quantitative"), LevelRule.ITEM_WEIGHTED),
)

#: Table 2's four discipline columns.
DISCIPLINES: tuple[str, ...] = ("Biology", "Chemistry", "Medicine", "Physics")
#: Raw `discipline` values -> Table 2 column. The release has more values than the paper's four
#: (formats.md); the extra ones go where appendix B lists them: Biochemistry and Bioengineering
#: are Biology subjects, the Engineering subjects (civil, mechanical, ceramic, thermal, ...)
#: are Physics subjects. An unknown value keeps its own name (reported, but in no Table 2 column).
DISCIPLINE_GROUPS: dict[str, str] = {
    "Biology": "Biology",
    "Biochemistry": "Biology",
    "Bioengineering": "Biology",
    "Chemistry": "Chemistry",
    "Medicine": "Medicine",
    "Physics": "Physics",
    "Engineering": "Physics",
}
#: Group sizes implied by Table 2's percentages (the only denominators that fit every row):
#: a check for the mapping above on the real release (they sum to 1000).
PAPER_DISCIPLINE_COUNTS: dict[str, int] = {"Biology": 409, "Chemistry": 165, "Medicine": 107, "Physics": 319}
#: §2.3.
PAPER_QUESTION_TYPE_COUNTS: dict[str, int] = {"conceptual": 370, "hypothetical": 385, "quantitative": 245}

DEFAULT_FRAMES = 32  # InternVL3 / LLaVA-OneVision / LLaVA-NeXT-Video setting (§3.2)

#: Per-model frame settings of §3.2 / Table 6, by preset name.
FRAME_PRESETS: dict[str, FrameOptions] = {
    "gemini": FrameOptions(fps=1.0),
    "gpt-4o": FrameOptions(counts={"all": 256}),
    "qwen2.5-vl": FrameOptions(counts={"all": 768}),
    "internvideo2.5": FrameOptions(counts={"all": 512}),
    "longva": FrameOptions(counts={"all": 128}),
    "internvl3": FrameOptions(counts={"all": 32}),
    "llava-onevision": FrameOptions(counts={"all": 32}),
    "llava-next-video": FrameOptions(counts={"all": 32}),
    "internvl2": FrameOptions(counts={"all": 16}),
}

GENERATION = GenerationDefaults(
    temperature=0.0,
    max_tokens=16,
    source="SciVideoBench lmms-eval task (max_new_tokens 16, greedy) and §3.2 (temperature 0)",
)
GENERATION_COT = GenerationDefaults(
    temperature=0.0,
    max_tokens=1024,
    source="SciVideoBench §3.8 CoT (MMVU [61] template; 1024 new tokens as MMVU and the task README use)",
)

#: Post prompts of the official task, by lmms-eval model family (`lmms_eval_specific_kwargs`).
POST_PROMPTS: dict[str, str] = {
    "default": "post_prompt_default.txt",
    "gpt4v": "post_prompt_gpt4v.txt",
    "llava_vid": "post_prompt_llava_vid.txt",
}
