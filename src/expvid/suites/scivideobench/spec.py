"""SciVideoBench as data: tasks, table groups, discipline mapping, frame settings, defaults.

Every default is written once, here, with where it comes from:
- paper §3.2 and Table 6 (appendix C): frames per model (1 fps for Gemini, 256 for GPT-4o, 768
  for Qwen2.5-VL, 512 for InternVideo2.5, 128 for LongVA, 32 for InternVL3 / LLaVA-OneVision /
  LLaVA-NeXT-Video, 16 for InternVL2); temperature 0.
- official lmms-eval task (`scivideobench.yaml`): greedy decoding, max_new_tokens 16 (its README
  example uses 1024), post prompts per model family (lmms-eval picks them by model: `gpt4v` for
  its GPT-4V/4o wrapper, `llava_vid` for LLaVA-Video, `default` otherwise), and the chain-of-thought
  post prompt `post_prompt_cot` (§3.8).
- resolution: every model is evaluated "at its native processing" (§3.2, appendix C): lmms-eval
  hands each model the decoded frames at the video's own size and the model's processor resizes
  them. The harness therefore sends source-size frames (aspect ratio kept) by default and for every
  preset; `--max-side N` / `--size N` override it and are recorded with the run.
- Table 2 layout: Overall | Conceptual, Hypothetical, Quantitative | Biology, Chemistry,
  Medicine, Physics. Overall and every group are pooled accuracy over their questions.
"""

from __future__ import annotations

from expvid.schema import AnswerType
from expvid.schema.dataset import TaskSpec
from expvid.scoring.levels import LevelRule, LevelSpec
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
#: Appendix B ("Disciplines and Subjects"): the subjects the paper lists under each discipline, as
#: printed. Microfluidics is listed under both Biology and Physics. Used by the recipe to place a
#: source labelled with a subject ("Neuroscience") in its discipline.
APPENDIX_B_SUBJECTS: dict[str, tuple[str, ...]] = {
    "Biology": (
        "Biochemistry", "Bioengineering", "Biogeotechnology", "Bioinformatics", "Genetic Engineering",
        "Lipidomics", "Mechanobiology", "Microfluidics", "Mycology", "Neurohistology", "Neuroscience",
        "Phycology", "Proteomics", "Regenerative Biology", "Structural Biology", "Cell Biology",
        "Molecular Biology",
    ),
    "Chemistry": (
        "Analytical Chemistry", "Electrochemistry", "Green Chemistry", "Nanomaterials", "Organic Chemistry",
        "Photocatalysis", "Photovoltaics", "Physical Chemistry", "Radiochemistry", "Materials Chemistry",
    ),
    "Medicine": (
        "Biomaterials", "Cardiovascular Research", "Dentistry", "Drug Delivery", "Immunology",
        "Molecular Imaging", "Nanomedicine", "Oncology", "Ophthalmology", "Pharmacology",
        "Radiopharmaceuticals", "Regenerative Medicine", "Surgical Devices", "Therapeutics",
    ),
    "Physics": (
        "Acoustofluidics", "Additive Manufacturing", "Aerosol Science", "Applied Physics", "Ceramic Engineering",
        "Ceramics", "Civil Engineering", "Condensed Matter Physics", "Ecological Engineering", "Electronics",
        "Fluid Dynamics", "Materials Science", "Mechanical Engineering", "Microfluidics", "Nanofabrication",
        "Plasma Physics", "Semiconductor", "Sensors", "Soft Robotics", "Thermal Engineering",
    ),
}  # fmt: skip
#: Group sizes implied by Table 2's percentages (the only denominators that fit every row):
#: a check for the mapping above on the real release (they sum to 1000).
PAPER_DISCIPLINE_COUNTS: dict[str, int] = {"Biology": 409, "Chemistry": 165, "Medicine": 107, "Physics": 319}
#: §2.3.
PAPER_QUESTION_TYPE_COUNTS: dict[str, int] = {"conceptual": 370, "hypothetical": 385, "quantitative": 245}

DEFAULT_FRAMES = 32  # InternVL3 / LLaVA-OneVision / LLaVA-NeXT-Video setting (§3.2)
#: (size, max_side) of the frames sent: the source size ("native processing", §3.2).
DEFAULT_RESOLUTION: tuple[int | None, int | None] = (None, None)


def _native(*, frames: int | None = None, fps: float | None = None) -> FrameOptions:
    """A per-model frame setting at the source size (both size fields set, so the preset decides)."""
    size, max_side = DEFAULT_RESOLUTION
    counts = {"all": frames} if frames is not None else {}
    return FrameOptions(counts=counts, fps=fps, size=size, max_side=max_side)


#: Per-model frame settings of §3.2 / Table 6, by preset name; every one at the source size.
FRAME_PRESETS: dict[str, FrameOptions] = {
    "gemini": _native(fps=1.0),
    "gpt-4o": _native(frames=256),
    "qwen2.5-vl": _native(frames=768),
    "internvideo2.5": _native(frames=512),
    "longva": _native(frames=128),
    "internvl3": _native(frames=32),
    "llava-onevision": _native(frames=32),
    "llava-next-video": _native(frames=32),
    "internvl2": _native(frames=16),
}
#: The post prompt lmms-eval gives each preset's model (`lmms_eval_specific_kwargs` by model name):
#: its `gpt4v` wrapper for GPT-4o, its `llava_vid` model for LLaVA-NeXT-Video; the others get the
#: default entry.
PRESET_POST_PROMPTS: dict[str, str] = {"gpt-4o": "gpt4v", "llava-next-video": "llava_vid"}

GENERATION = GenerationDefaults(
    temperature=0.0,
    max_tokens=16,
    source="SciVideoBench lmms-eval task (max_new_tokens 16, greedy) and §3.2 (temperature 0)",
)
GENERATION_COT = GenerationDefaults(
    temperature=0.0,
    max_tokens=1024,
    source=(
        "SciVideoBench §3.8 CoT (the task's post_prompt_cot, or MMVU [61] with cot=mmvu); 1024 new tokens "
        "as the task README and MMVU use (the task file's 16 would cut the reasoning off)"
    ),
)

#: Post prompts of the official task, by lmms-eval model family (`lmms_eval_specific_kwargs`), as
#: the current task file has them (the `llava_vid` entry is the default text).
POST_PROMPTS: dict[str, str] = {
    "default": "post_prompt_default.txt",
    "gpt4v": "post_prompt_gpt4v.txt",
    "llava_vid": "post_prompt_llava_vid.txt",
}
#: Chain-of-thought templates (`--variant cot[=NAME]`): the task's own `post_prompt_cot` (default)
#: and MMVU's multiple-choice CoT template, which §3.8 says it follows.
COT_TEMPLATES: dict[str, str] = {"official": "post_prompt_cot.txt", "mmvu": "cot_mmvu.txt"}
