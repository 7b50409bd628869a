"""Scoring: answer extraction, the paper's metrics, aggregation with intervals, and L3 judges.

Typical use (what `expvid.run` does per item, then once per run):

    extraction = extract_answer(prediction.response, item)
    judgment = await judge.judge(item, extraction.value) if needs_judge(item, extraction) else None
    score = score_item(item, extraction, judgment)
    report = build_report(scores)          # -> scores.json via report.write(path)

Importing this package loads no model: the offline judge's embedding model loads on first use.
"""

from expvid.scoring.aggregate import build_report, score_group
from expvid.scoring.bootstrap import PairedResult, bootstrap_intervals, cluster_table, paired_comparison
from expvid.scoring.extraction import Extraction, extract_answer, split_reasoning
from expvid.scoring.judges import BlankJudge, LLMBlankJudge, OfflineBlankJudge
from expvid.scoring.levels import EXPVID_LEVELS, LevelRule, LevelSpec
from expvid.scoring.metrics import greedy_box_iou, jaccard, needs_judge, score_item
from expvid.scoring.reference import expvid_table2
from expvid.scoring.report import LevelSummary, ScoreGroup, ScoreReport, TaskSummary

__all__ = [
    "EXPVID_LEVELS",
    "BlankJudge",
    "Extraction",
    "LLMBlankJudge",
    "LevelRule",
    "LevelSpec",
    "LevelSummary",
    "OfflineBlankJudge",
    "PairedResult",
    "ScoreGroup",
    "ScoreReport",
    "TaskSummary",
    "bootstrap_intervals",
    "build_report",
    "cluster_table",
    "expvid_table2",
    "extract_answer",
    "greedy_box_iou",
    "jaccard",
    "needs_judge",
    "paired_comparison",
    "score_group",
    "score_item",
    "split_reasoning",
]
