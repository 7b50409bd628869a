"""ProMQA as data: question types, table groups, defaults - each with where it comes from.

- Tasks = the eight question types in the column order of Tables 10 and 15: missing, next, order,
  measurement, preparation, technique, temperature, timing. "Avg." is the mean over all examples.
- Breakdowns: clean / noisy (the record's `is_noisy`: errors in previous steps; Tables 10, 15) and
  answer source (Table 16, `answer_tags`): only machine-generated answers, only human-written
  ("annotator" / "adjudicator") answers, or both. Answer TYPE (direct / suggestion / intervention,
  Table 16's right half) is not in the release; it is reported when the examples carry
  `answer_types` (one per answer, as `expvid platform export --format promqa --answer-types` writes).
- Inference (official `src/benchmark/predict.py` and `utils.py`): frames at 1 fps from 0 to
  `end_time`, thinned from the end to `max_frames` (the last frame always kept), the text prompt
  FIRST and the frames after it in one user message, temperature 0, at most 128 new tokens.
  Table 10's main rows use 50 frames for GPT-4o and Gemini (10 for Claude, 100 for Qwen2-VL, 8 for
  VideoLLaMA2); 50 is the default here.
- Resolution (Table 10 "f, p" and the official `script/preprocess/video.sh`, which extracts frames
  with `ffmpeg -vf fps=1,scale=W:-1`): the API models (GPT-4o, Gemini, Claude) got 765p frames,
  1360 px wide, scaled from the 4K recordings; LLaVA 1.5 got 288p (512 wide, from the 360p
  recordings); Qwen2-VL and VideoLLaMA2 336p (their own inference code). CaptainCook4D recordings
  are 16:9 landscape, so the width is the longest side: 765p = `max_side` 1360, 288p = 512,
  336p = 597. Default: 1360 (the GPT-4o row the default 50 frames belong to).
- Judge (`src/benchmark/evaluate.py`, template "ternary-step"): GPT-4o (gpt-4o-2024-08-06),
  temperature 0, 256 new tokens; score = mean(0/1/2) x 50; the judge reads the raw prediction.
"""

from __future__ import annotations

from expvid.schema import AnswerType
from expvid.schema.dataset import TaskSpec
from expvid.scoring.levels import LevelRule, LevelSpec
from expvid.suites.protocol import FrameOptions, GenerationDefaults
from expvid.suites.release_layout import GitHubRelease

SUITE = "promqa"
EXAMPLES_FILE = "examples.json"
GRAPHS_FILE = "graphs.json"
#: The QA files in the authors' repository (`expvid data fetch promqa`); the recordings are not there.
PROMQA_RELEASE = GitHubRelease(
    repo="kimihiroh/promqa",
    files=(f"data/{EXAMPLES_FILE}", f"data/{GRAPHS_FILE}"),
    license="Apache-2.0 (CaptainCook4D annotations, human verification); QA pairs generated with GPT-4o",
    external_media=(
        "ProMQA's recordings are CaptainCook4D's and are not redistributed with the QA files. Download them with "
        "https://github.com/CaptainCook4D/downloader (the ProMQA authors use: python download_gopro_data.py "
        "--data2d --resolution4K; see https://captaincook4d.github.io/captain-cook/ for the licence), then put "
        "each recording at {root}/videos/<recording_id>.mp4 (or <recording_id>_4K.mp4, or resolution_4k/). "
        "{n} recording(s) are referenced by the fetched questions."
    ),
    label="ProMQA",
    task_noun="question type",
)

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
ANSWER_TYPES = frozenset({"direct", "suggestion", "intervention"})
#: Table 11 / 16's answer-type columns (examples by the set of their answers' types).
ANSWER_TYPE_GROUPS: tuple[str, ...] = (
    "direct",
    "direct & suggestion",
    "direct & intervention",
    "suggestion",
    "all",
)


def answer_type_group(types: list[str]) -> str:
    """Table 11's column of an example from its answers' types (other sets are named by their types)."""
    present = set(types)
    named = {
        frozenset({"direct"}): "direct",
        frozenset({"direct", "suggestion"}): "direct & suggestion",
        frozenset({"direct", "intervention"}): "direct & intervention",
        frozenset({"suggestion"}): "suggestion",
        ANSWER_TYPES: "all",
    }
    return named.get(frozenset(present), " & ".join(sorted(present)))


#: Where a recording may live, tried in order ({id} = recording_id): a plain copy, then the 4K
#: files (what the 765p rows were scaled from), then CaptainCook4D's 360p files (what the 288p row
#: was scaled from; at most 640x360, so a 1360 px setting gets 360p frames from them).
VIDEO_CANDIDATES: tuple[str, ...] = (
    "videos/{id}.mp4",
    "videos/{id}_4K.mp4",
    "resolution_4k/{id}_4K.mp4",
    "recordings/{id}.mp4",
    "{id}.mp4",
    "videos/{id}_360p.mp4",
    "resolution_360p/{id}_360p.mp4",
)

DEFAULT_MAX_FRAMES = 50
SAMPLING_FPS = 1.0
#: Longest side (px) of the paper's resolutions for 16:9 recordings (`scale=W:-1` in the official
#: preprocessing; 336p is not in it and is 336 x 16 / 9 rounded).
MAX_SIDE_765P = 1360
MAX_SIDE_336P = 597
MAX_SIDE_288P = 512
#: (size, max_side) when none is given: 765p, Table 10's GPT-4o / Gemini / Claude setting.
DEFAULT_RESOLUTION: tuple[int | None, int | None] = (None, MAX_SIDE_765P)


def _row(frames: int, max_side: int) -> FrameOptions:
    return FrameOptions(max_frames=frames, size=None, max_side=max_side)


#: Tables 10 and 15, by preset name: "(Nf, Pp)" -> at most N frames at P.
FRAME_PRESETS: dict[str, FrameOptions] = {
    "gpt-4o": _row(50, MAX_SIDE_765P),
    "gemini-1.5-pro": _row(50, MAX_SIDE_765P),
    "claude-3.5-sonnet": _row(10, MAX_SIDE_765P),
    "qwen2-vl": _row(100, MAX_SIDE_336P),
    "videollama2": _row(8, MAX_SIDE_336P),
    "videollama2-16f": _row(16, MAX_SIDE_336P),
    "llava-1.5": _row(50, MAX_SIDE_288P),
    "gpt-4o-100f": _row(100, MAX_SIDE_288P),
    "gpt-4o-250f": _row(250, MAX_SIDE_288P),
    "gemini-1.5-pro-100f": _row(100, MAX_SIDE_288P),
    "gemini-1.5-pro-250f": _row(250, MAX_SIDE_288P),
    "claude-3.5-sonnet-100f": _row(100, MAX_SIDE_288P),
}
FRAME_PRESETS["gemini"] = FRAME_PRESETS["gemini-1.5-pro"]
FRAME_PRESETS["claude"] = FRAME_PRESETS["claude-3.5-sonnet"]
GENERATION = GenerationDefaults(
    temperature=0.0, max_tokens=128, source="ProMQA code (src/benchmark/predict.py defaults); §C.2"
)
