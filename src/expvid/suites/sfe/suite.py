"""SFE as the runner evaluates it: images, appendix D prompts, the 0-10 judge, BERTScore, box IoU.

Scores: judged items (mcq, exact_match, open_ended) earn judge/10, so task scores and the
"Average" are the paper's LLM score (mean x 10). Box items (E011, E012) earn the official
prediction-order greedy IoU. Beside them (metrics in scores.json): BERTScore F1 of open answers
(model configurable, default `auto`), execution success and IoU over parsed answers only (the
official aggregation), the order-free best-pair IoU, and the judge score as the official parser
would have read it. Breakdowns by language, discipline x language and cognitive level x language
give Tables 3 and 4.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from expvid.models.factory import create_backend
from expvid.models.types import AnswerHints, ImagePart, Message, TextPart
from expvid.schema import (
    AnswerType,
    ExtractionStatus,
    Item,
    ItemScore,
    Judgment,
    SamplerSettings,
)
from expvid.scoring import Extraction, extract_answer, needs_judge, score_item
from expvid.scoring.bertscore import BertScorer
from expvid.scoring.extraction import extract_boxes, split_reasoning
from expvid.scoring.judges.graded import GradedJudge, official_score_parse
from expvid.scoring.judges.offline_graded import OfflineGradedJudge
from expvid.scoring.metrics import greedy_box_iou, video_id_of
from expvid.scoring.sfe_boxes import parse_official_boxes, prediction_order_greedy_iou
from expvid.suites.base import Dataset
from expvid.suites.judge_adapter import JudgeAdapter
from expvid.suites.protocol import FrameOptions, PromptOptions
from expvid.suites.sfe.loader import load_sfe, read_level_map
from expvid.suites.sfe.prompts import build_prompt, option_letters
from expvid.suites.sfe.spec import DISCIPLINES, GENERATION, LANGUAGES, LEVELS, METRIC_UNITS, SUITE, TASKS

JUDGE_SCALE = 10.0
OPTION_KEYS = ("languages", "bertscore", "levels")


@cache
def _reference() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("reference_tables.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


class SFEJudge(JudgeAdapter):
    """The runner's view of an SFE judge (LLM or offline): one 0-10 score per answer."""

    inner: GradedJudge | OfflineGradedJudge

    async def judge(self, item: Item, extraction: Extraction, response: str | None) -> Judgment:
        prediction = extraction.value if isinstance(extraction.value, str) else (response or "")
        answer = str(item.meta["answer_raw"])
        if isinstance(self.inner, OfflineGradedJudge):
            options = option_letters(list(item.meta.get("options", [])))
            return await self.inner.decide(
                item_id=item.id, task=item.task, answer=answer, prediction=prediction, options=options
            )
        return await self.inner.decide(
            item_id=item.id, task=item.task, question=build_prompt(item), answer=answer, prediction=prediction
        )


class SFESuite:
    """830 scientific image questions per language, judged 0-10, with BERTScore and box IoU."""

    name = SUITE
    #: The paper's judge model, used when only --judge-base-url is given.
    default_judge_model = "gpt-4o-2024-11-20"
    tasks = TASKS
    levels = LEVELS
    generation = GENERATION
    metric_units = METRIC_UNITS

    def __init__(self, **options: Any) -> None:
        unknown = sorted(set(options) - set(OPTION_KEYS))
        if unknown:
            raise ValueError(f"unknown SFE suite option(s) {unknown}; options: {', '.join(OPTION_KEYS)}")
        languages = options.get("languages", ["en"])
        if isinstance(languages, str):
            languages = ["en", "zh"] if languages == "both" else [languages]
        if not languages or any(language not in LANGUAGES for language in languages):
            raise ValueError(f"SFE languages are en, zh or both; got {languages!r}")
        self.languages: tuple[str, ...] = tuple(languages)
        self.bertscore_spec = str(options.get("bertscore", "auto"))
        self.level_file = Path(options["levels"]) if options.get("levels") else None
        self._scorer: BertScorer | None = None

    def load(
        self,
        root: Path,
        *,
        tasks: Sequence[str] | None = None,
        strict: bool = False,
        check_media: bool = True,
    ) -> Dataset:
        levels = read_level_map(self.level_file) if self.level_file else None
        return load_sfe(
            root, languages=self.languages, tasks=tasks, strict=strict, check_media=check_media, levels=levels
        )

    def validate_options(self, prompt: PromptOptions, frames: FrameOptions) -> None:
        if prompt.with_asr or prompt.variant:
            raise ValueError(
                "SFE has one prompt per question type (appendix D); --with-asr / --variant do not apply"
            )

    def sampler(self, item: Item, frames: FrameOptions) -> SamplerSettings | None:
        return None  # images are sent as stored

    def prompt_text(self, item: Item, options: PromptOptions) -> str:
        return build_prompt(item)

    def messages(self, item: Item, images: Sequence[ImagePart], options: PromptOptions) -> list[Message]:
        return [Message(role="user", content=[*images, TextPart(text=self.prompt_text(item, options))])]

    def hints(self, item: Item) -> AnswerHints:
        if item.meta.get("question_type") == "mcq":
            letters = option_letters(list(item.meta.get("options", [])))
            if letters:
                return AnswerHints(answer_type=AnswerType.CHOICE, options=letters)
        return AnswerHints(answer_type=item.answer_type)

    def extract(self, response: str | None, item: Item) -> Extraction:
        if item.answer_type is not AnswerType.BOXES:
            return extract_answer(response, item)
        if response is None:
            return Extraction.failed()
        answer, _ = split_reasoning(response)
        boxes = parse_official_boxes(answer)
        if boxes is None:
            return Extraction.unparseable(
                "no [x1, y1, x2, y2; ...] box list (the official format)", rule="official_boxes"
            )
        return Extraction.found(boxes, "official_boxes")

    def needs_judge(self, item: Item, extraction: Extraction) -> bool:
        return needs_judge(item, extraction)

    def score(self, item: Item, extraction: Extraction, judgment: Judgment | None) -> ItemScore:
        if item.answer_type is not AnswerType.BOXES:
            return score_item(item, extraction, judgment, graded_max=JUDGE_SCALE)
        gold = [box.as_list() for box in item.answer]  # type: ignore[union-attr]
        earned = prediction_order_greedy_iou(gold, extraction.value) if extraction.ok else 0.0
        return ItemScore(
            item_id=item.id,
            task=item.task,
            status=extraction.status,
            extracted=extraction.value,
            earned=earned,
            discipline=item.discipline,
            video_id=video_id_of(item),
        )

    def build_judge(self, spec: str | None, backend_options: dict[str, Any]) -> SFEJudge:
        """SFE's 0-10 LLM judge behind `spec` (the paper: openai:gpt-4o-2024-11-20), or offline."""
        if spec is None:
            return SFEJudge(OfflineGradedJudge())
        return SFEJudge(GradedJudge(create_backend(spec, **backend_options)))

    def groups(self, item: Item) -> dict[str, str]:
        language = str(item.meta["language"])
        groups = {
            "language": language,
            "discipline_language": f"{item.discipline}|{language}",
            "task_id": str(item.meta["task_id"]),
        }
        if item.level is not None:
            groups["level_language"] = f"L{item.level}|{language}"
        return groups

    # -- metrics beside the headline --------------------------------------------------------

    @property
    def scorer(self) -> BertScorer:
        if self._scorer is None:
            self._scorer = BertScorer(self.bertscore_spec)
        return self._scorer

    def extra_metrics(
        self, entries: Sequence[tuple[Item, Extraction, Judgment | None, str | None]]
    ) -> dict[str, dict[str, float | None]]:
        """Per item: BERTScore F1 (open), execution success and IoU variants (boxes), official judge parse."""
        values: dict[str, dict[str, float | None]] = {}
        open_pairs: list[tuple[str, str, str]] = []
        for item, extraction, judgment, response in entries:
            metrics: dict[str, float | None] = {}
            if item.answer_type is AnswerType.BOXES:
                metrics.update(_box_metrics(item, extraction, response))
            else:
                failed = extraction.status is ExtractionStatus.FAILED
                raw = judgment.raw if judgment is not None and judgment.error is None else None
                metrics["llm_score_official_parse"] = None if failed else 10.0 * official_score_parse(raw)
                if item.task == "open_ended":
                    metrics["bertscore_f1"] = None
                    if extraction.ok:
                        open_pairs.append((item.id, str(extraction.value), str(item.meta["answer_raw"])))
            values[item.id] = metrics
        if open_pairs:
            scores = self.scorer.score_pairs([(prediction, gold) for _, prediction, gold in open_pairs])
            for (item_id, _, _), value in zip(open_pairs, scores, strict=True):
                values[item_id]["bertscore_f1"] = value.f1
        return values

    def metric_settings(self) -> dict[str, Any]:
        return {"bertscore": self.scorer.describe()}

    def score_notes(self) -> list[str]:
        if self.scorer.spec.official:
            return []
        return [
            f"BERTScore used {self.scorer.describe()['model']}, layer {self.scorer.spec.layer}, not the paper's "
            "bert-base-multilingual-cased layer 9; its values are not comparable to Table 4's."
        ]

    # -- report -----------------------------------------------------------------------------

    def table_layout(self) -> list[dict[str, Any]]:
        """Table 3 (Average and disciplines, en/zh) then Table 4 (levels, question types, en/zh)."""

        def pair(
            prefix: str,
            label: str,
            dimension: str,
            tail: list[str],
            *,
            crossed: bool = False,
            fmt: str = ".1f",
        ) -> list[dict[str, Any]]:
            """An en and a zh column; `crossed` dimensions are keyed "{prefix}|{language}"."""
            return [
                {
                    "key": f"{prefix}:{language}",
                    "label": f"{label} {language}",
                    "kind": "cell",
                    "path": ["breakdowns", dimension, f"{prefix}|{language}" if crossed else language, *tail],
                    "fmt": fmt,
                }
                for language in LANGUAGES
            ]

        average = ["levels", "Average"]
        groups = [{"name": "Average", "columns": pair("Average", "Avg.", "language", average)}]
        for discipline in DISCIPLINES:
            columns = pair(discipline, discipline, "discipline_language", average, crossed=True)
            groups.append({"name": discipline, "columns": columns})
        for level in ("L1", "L2", "L3"):
            groups.append(
                {"name": level, "columns": pair(level, level, "level_language", average, crossed=True)}
            )
        groups += [
            {
                "name": "Exact Match (IoU)",
                "columns": pair("iou", "EM IoU", "language", ["tasks", "grounding"]),
            },
            {
                "name": "Exact Match (LLM)",
                "columns": pair("em", "EM LLM", "language", ["tasks", "exact_match"]),
            },
            {
                "name": "Open Question (BERTScore)",
                "columns": pair("bert", "Open BERTScore", "language", ["metrics", "bertscore_f1"], fmt=".3f"),
            },
            {
                "name": "Open Question (LLM)",
                "columns": pair("open", "Open LLM", "language", ["tasks", "open_ended"]),
            },
            {"name": "MCQ (LLM)", "columns": pair("mcq", "MCQ LLM", "language", ["tasks", "mcq"])},
        ]
        return groups

    def reference_rows(self) -> list[dict[str, Any]]:
        data = _reference()
        columns = data["columns"]
        return [
            {"label": f"{row['label']} (paper)", "values": dict(zip(columns, row["values"], strict=True))}
            for row in data["rows"]
        ]


def _box_metrics(item: Item, extraction: Extraction, response: str | None) -> dict[str, float | None]:
    if extraction.status is ExtractionStatus.FAILED:
        return {"exec_success": None, "iou_parsed_only": None, "iou_best_pair": None}
    gold_lists = [box.as_list() for box in item.answer]  # type: ignore[union-attr]
    parsed_only = 100.0 * prediction_order_greedy_iou(gold_lists, extraction.value) if extraction.ok else None
    lenient = extract_boxes(split_reasoning(response or "")[0], item)
    best_pair = 100.0 * greedy_box_iou(lenient.value, item.answer) if lenient.ok else 0.0  # type: ignore[arg-type]
    return {
        "exec_success": 100.0 if extraction.ok else 0.0,
        "iou_parsed_only": parsed_only,
        "iou_best_pair": best_pair,
    }
