"""SFE (Scientists' First Exam) as data: question types, cognitive levels, languages, defaults.

- Tasks here are the question types of Table 4: `mcq`, `exact_match`, `open_ended`, plus
  `grounding` for the box tasks E011 and E012 (exact-match questions in Table 6, scored by IoU).
  "Average" is the LLM-as-a-judge score pooled over every judged item (mcq, exact_match,
  open_ended): Table 3's headline.
- §4 General Settings: temperature 0, at most 1024 new tokens (appendix H shows 16384 changes the
  results of reasoning models). Judge: GPT-4o-2024-11-20 with the appendix E prompt, 0-10,
  reported x 10. BERTScore F1 for open questions; IoU and execution success for E011/E012.
- Cognitive levels (L1 perception, L2 understanding, L3 comparative reasoning) are a property of
  the SFE task (the id prefix, e.g. C004). The release records do not carry them and the paper
  has no task-by-level table: `TASK_LEVELS` holds the tasks whose level §3.2 names explicitly.
  A record field `cognitive_level` (or `level`, "L1".."L3" or 1..3) wins, and the suite option
  `levels=FILE` (JSON {task_id: level}) adds the rest; items of other tasks are in no L column.
"""

from __future__ import annotations

from expvid.schema import AnswerType
from expvid.schema.dataset import TaskSpec
from expvid.scoring.levels import LevelRule, LevelSpec
from expvid.suites.protocol import GenerationDefaults

SUITE = "sfe"
LANGUAGES: tuple[str, ...] = ("en", "zh")
GROUNDING_TASK_IDS = frozenset({"E011", "E012"})
QUESTION_TYPES: tuple[str, ...] = ("mcq", "exact_match", "open_ended")

TASKS: tuple[TaskSpec, ...] = (
    TaskSpec("mcq", None, AnswerType.FREE_TEXT, "Multiple-choice", "MCQ", "", "llm_0_10"),
    TaskSpec("exact_match", None, AnswerType.FREE_TEXT, "Exact match", "Exact Match", "", "llm_0_10"),
    TaskSpec("open_ended", None, AnswerType.FREE_TEXT, "Open question", "Open Question", "", "llm_0_10"),
    TaskSpec("grounding", None, AnswerType.BOXES, "Box grounding (E011, E012)", "IoU", "", "greedy_iou"),
)
LEVELS: tuple[LevelSpec, ...] = (LevelSpec("Average", QUESTION_TYPES, LevelRule.ITEM_WEIGHTED),)

#: Table 3's discipline columns.
DISCIPLINES: tuple[str, ...] = ("Astronomy", "Chemistry", "Earth", "Life", "Material")
#: A task id's first letter names its discipline (A001 Astronomy, C004 Chemistry, E011 Earth, L001
#: Life, M003 Material: the 66 task ids of the release and §3.2), which the record's free-text
#: `field` ("Earth Science", "Materials science", ...) only spells in many ways.
DISCIPLINE_OF_PREFIX: dict[str, str] = {name[0]: name for name in DISCIPLINES}


def discipline_of(task_id: str) -> str | None:
    """Table 3's discipline of an SFE task id, None when its prefix is not one of the five."""
    return DISCIPLINE_OF_PREFIX.get(task_id[:1].upper())


#: Cognitive level of the tasks §3.2 names explicitly ("L1 tasks include ...").
TASK_LEVELS: dict[str, int] = {
    "A001": 1, "A003": 2, "A006": 2, "A007": 2, "A008": 2, "A011": 3,
    "C001": 1, "C004": 1, "C005": 2, "C023": 2, "C024": 2, "C029": 3, "C030": 3,
    "E004": 1, "E008": 1, "E011": 1, "E005": 2, "E006": 2, "E021": 2, "E014": 3, "E018": 3,
    "L001": 1, "L008": 1, "L009": 1, "L006": 2, "L010": 2, "L007": 3,
    "M001": 1, "M002": 1, "M003": 1, "M006": 2, "M008": 2, "M010": 2, "M020": 3,
}  # fmt: skip

GENERATION = GenerationDefaults(temperature=0.0, max_tokens=1024, source="SFE §4 General Settings")

#: The official aggregation's IoU thresholds (`sfe-en.yaml`: acc@0.1, 0.3, 0.5, 0.7, 0.9).
IOU_THRESHOLDS: tuple[float, ...] = (0.1, 0.3, 0.5, 0.7, 0.9)


def acc_key(threshold: float) -> str:
    """The official metric: share of ALL items of the set whose box IoU is above the threshold."""
    return f"acc@{threshold:g}"


def box_acc_key(threshold: float) -> str:
    """The same share over the box items only (unparseable = 0)."""
    return f"box_acc@{threshold:g}"


#: Metrics reported beside the judge score, and their scales.
METRIC_UNITS: dict[str, str] = {
    "bertscore_f1": "0-1",
    "bertscore_f1_official": "0-1",
    "exec_success": "%",
    "iou_parsed_only": "%",
    "iou_best_pair": "%",
    "llm_score_official_parse": "%",
    "level_covered": "%",
    **{acc_key(t): "%" for t in IOU_THRESHOLDS},
    **{box_acc_key(t): "%" for t in IOU_THRESHOLDS},
}
