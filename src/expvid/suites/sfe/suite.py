"""SFE as the runner evaluates it: images, appendix D prompts, the 0-10 judge, BERTScore, box IoU.

Scores: judged items (mcq, exact_match, open_ended) earn judge/10, so task scores and the
"Average" are the paper's LLM score (mean x 10). Box items (E011, E012) earn the official
prediction-order greedy IoU, an unparseable answer 0 (the strict "EM IoU (unparseable = 0)").
Beside them (metrics in scores.json): BERTScore F1 of open answers (model configurable, default
`auto`), execution success, IoU over parsed answers only (the official aggregation and the
paper's "EM IoU" column), the official acc@0.1..0.9 (as its aggregation computes them: over every
item of the set) and box_acc@0.1..0.9 (over the box items), the order-free best-pair IoU, and the
judge score as the official parser would have read it. Breakdowns by language, discipline x
language and cognitive level x language give Tables 3 and 4.

The judge and BERTScore read the reply as the model wrote it, as the official code does
(`judge_input="raw"`), or with its think blocks removed (`"stripped"`, for reasoning models).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, Unpack

from pydantic import field_validator

from expvid.models.factory import create_backend
from expvid.models.types import AnswerHints
from expvid.schema import AnswerType, ExtractionStatus, Item, ItemScore, Judgment, SamplerSettings
from expvid.schema.dataset import Dataset
from expvid.scoring import Extraction, extract_answer, score_item
from expvid.scoring.bertscore import BertScorer
from expvid.scoring.extraction import extract_boxes, split_reasoning
from expvid.scoring.metrics import greedy_box_iou, video_id_of
from expvid.suites.chance import ChancePools
from expvid.suites.judge_adapter import JudgeAdapter, JudgeInput, judge_input_setting, judged_text
from expvid.suites.protocol import FrameOptions, LoadOptions, resolution_given
from expvid.suites.sample_report import SampleReport
from expvid.suites.settings import SuiteSettings, setting
from expvid.suites.sfe.judge import GradedJudge, official_score_parse
from expvid.suites.sfe.loader import load_sfe, read_level_map
from expvid.suites.sfe.official_boxes import parse_official_boxes, prediction_order_greedy_iou
from expvid.suites.sfe.offline_judge import OfflineGradedJudge
from expvid.suites.sfe.prompts import build_prompt, option_letters
from expvid.suites.sfe.spec import (
    DISCIPLINES,
    GENERATION,
    IOU_THRESHOLDS,
    LANGUAGES,
    LEVELS,
    METRIC_UNITS,
    SUITE,
    TASK_LEVELS,
    TASKS,
    acc_key,
    box_acc_key,
)
from expvid.suites.suite import Suite

JUDGE_SCALE = 10.0
#: Tables 3 and 4 print two decimals (BERTScore three, on its 0-1 scale).
TABLE_FORMAT = ".2f"
_BERTSCORE_SPEC = re.compile(r"^(auto|official|minilm|.+:\d+)$")


class SFESettings(SuiteSettings):
    """What may change in an SFE run besides the generic options."""

    renamed: ClassVar[dict[str, str]] = {"languages": "language"}

    language: Literal["en", "zh", "both"] = setting(
        "en",
        help="Which set to run: English, Chinese, or both (separate datasets, reported side by side).",
        paper="SFE §3 (830 questions per language), Tables 3-4 (en / zh columns)",
    )
    box_prompt: Literal["paper", "official"] = setting(
        "paper",
        help="Instruction for the box tasks E011/E012: appendix D's bounding-box sentence (paper), or the "
        "exact-match sentence SFE's own released lmms-eval task sends (official).",
        paper="SFE appendix D; SFE lmms-eval task construct_prompt",
    )
    judge_input: JudgeInput = judge_input_setting(
        "What the judge, BERTScore and the box parser read: the reply as written (raw, the official code), "
        "or without its think blocks (stripped)."
    )
    bertscore: str = setting(
        "auto",
        help="BERTScore model for open answers: official (bert-base-multilingual-cased, layer 9), minilm, "
        "PATH:LAYER, or auto (official when cached, else minilm).",
        paper="SFE §4 Metrics; official sfe_process_results",
        scoring=True,
    )
    levels: Path | None = setting(
        None,
        help="JSON {task_id: 1-3} with the cognitive level of tasks §3.2 does not name (L columns).",
        paper="SFE §3.2 names the level of 34 of the 66 tasks",
        scoring=True,
    )

    @field_validator("language", mode="before")
    @classmethod
    def _language_list(cls, value: Any) -> Any:
        """The old form, a list of languages: ["en", "zh"] is both."""
        if isinstance(value, list | tuple):
            chosen = {str(v) for v in value}
            return "both" if chosen == set(LANGUAGES) else next(iter(chosen)) if len(chosen) == 1 else value
        return value

    @field_validator("bertscore")
    @classmethod
    def _bertscore_spec(cls, value: str) -> str:
        if not _BERTSCORE_SPEC.match(value.strip()):
            raise ValueError("expected auto, official, minilm or PATH_OR_NAME:LAYER (e.g. /models/bert:9)")
        return value.strip()

    @property
    def languages(self) -> tuple[str, ...]:
        return LANGUAGES if self.language == "both" else (self.language,)


class SFEJudge(JudgeAdapter):
    """The runner's view of an SFE judge (LLM or offline): one 0-10 score per answer."""

    inner: GradedJudge | OfflineGradedJudge

    async def judge(self, item: Item, extraction: Extraction, response: str | None) -> Judgment:
        prediction = self.prediction(extraction, response)
        answer = str(item.meta["answer_raw"])
        if isinstance(self.inner, OfflineGradedJudge):
            options = option_letters(list(item.meta.get("options", [])))
            return await self.inner.decide(
                item_id=item.id, task=item.task, answer=answer, prediction=prediction, options=options
            )
        return await self.inner.decide(
            item_id=item.id, task=item.task, question=build_prompt(item), answer=answer, prediction=prediction
        )


class SFESuite(Suite):
    """830 scientific image questions per language, judged 0-10, with BERTScore and box IoU."""

    name = SUITE
    title = "SFE (Scientists' First Exam): scientific image questions, en and zh, judged 0-10"
    #: The paper's judge model, used when only --judge-base-url is given.
    default_judge_model = "gpt-4o-2024-11-20"
    hub_repo = "PrismaX/SFE"
    tasks = TASKS
    levels = LEVELS
    generation = GENERATION
    metric_units = METRIC_UNITS
    judge_scale = JUDGE_SCALE
    reference_file = "reference_tables.json"
    Settings = SFESettings
    settings: SFESettings

    def __init__(self, settings: SFESettings | dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        self._scorer: BertScorer | None = None
        #: Cognitive-level coverage of the last scored entries (see `extra_metrics`).
        self._coverage: dict[str, dict[str, int]] = {}

    @property
    def judge_input(self) -> str:
        return self.settings.judge_input

    def load(self, root: Path, **options: Unpack[LoadOptions]) -> Dataset:
        level_file = self.settings.levels
        levels = read_level_map(level_file) if level_file else None
        dataset = load_sfe(
            root,
            languages=self.settings.languages,
            levels=levels,
            **options,
        )
        self._chance = ChancePools.of(
            (_chance_group(item, by_task=by_task), item.id, [str(item.meta["answer_raw"])])
            for item in dataset.items
            for by_task in (True, False)
        )
        return dataset

    def resolve_frames(self, frames: FrameOptions) -> FrameOptions:
        if resolution_given(frames) and (frames.size is not None or frames.max_side is not None):
            raise ValueError(
                "SFE sends its images as released (the official task resizes none); --size / --max-side do not apply"
            )
        return frames

    def sampler(self, item: Item, frames: FrameOptions) -> SamplerSettings | None:
        return None  # images are sent as stored

    def prompt_text(self, item: Item) -> str:
        return build_prompt(item, box_prompt=self.settings.box_prompt)

    def hints(self, item: Item) -> AnswerHints:
        """Multiple choice: the option letters. Otherwise, for chance baselines, the gold answers of
        the other questions of the same SFE task and language (of its question type when the task
        has no other question)."""
        if item.meta.get("question_type") == "mcq":
            letters = option_letters(list(item.meta.get("options", [])))
            if letters:
                return AnswerHints(answer_type=AnswerType.CHOICE, options=letters)
        pool = self._chance.others(_chance_group(item), item.id) or self._chance.others(
            _chance_group(item, by_task=False), item.id
        )
        return AnswerHints(answer_type=item.answer_type, chance_answers=pool)

    def extract(self, response: str | None, item: Item) -> Extraction:
        if item.answer_type is not AnswerType.BOXES:
            return extract_answer(response, item)
        if response is None:
            return Extraction.failed()
        # "raw": the official parser reads the whole reply, think blocks included; "stripped": the answer.
        answer = response if self.judge_input == "raw" else split_reasoning(response)[0]
        boxes = parse_official_boxes(answer)
        if boxes is None:
            return Extraction.unparseable(
                "no [x1, y1, x2, y2; ...] box list (the official format)", rule="official_boxes"
            )
        return Extraction.found(boxes, "official_boxes")

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
            return SFEJudge(OfflineGradedJudge(), self.judge_input)
        return SFEJudge(GradedJudge(create_backend(spec, **backend_options)), self.judge_input)

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
            self._scorer = BertScorer(self.settings.bertscore)
        return self._scorer

    def extra_metrics(
        self, entries: Sequence[tuple[Item, Extraction, Judgment | None, str | None]]
    ) -> dict[str, dict[str, float | None]]:
        """Per item: BERTScore F1 (open), box metrics (E011/E012), the official acc@t (every item),
        the judge score as the official parser reads it, and whether the item is in an L column."""
        values: dict[str, dict[str, float | None]] = {}
        open_pairs: list[tuple[str, str, str]] = []
        for item, extraction, judgment, response in entries:
            metrics: dict[str, float | None] = {"level_covered": 100.0 if item.level is not None else 0.0}
            if item.answer_type is AnswerType.BOXES:
                metrics.update(_box_metrics(item, extraction, response))
            else:
                # The official acc@t averages over EVERY item of the set; a non-box item counts 0.
                metrics.update({acc_key(threshold): 0.0 for threshold in IOU_THRESHOLDS})
                failed = extraction.status is ExtractionStatus.FAILED
                raw = judgment.raw if judgment is not None and judgment.error is None else None
                metrics["llm_score_official_parse"] = None if failed else 10.0 * official_score_parse(raw)
                if item.task == "open_ended":
                    metrics["bertscore_f1"] = None
                    # The official aggregation averages over every open item, an unparseable one as 0.
                    metrics["bertscore_f1_official"] = 0.0
                    if extraction.ok:
                        prediction = judged_text(self.judge_input, extraction, response)
                        open_pairs.append((item.id, prediction, str(item.meta["answer_raw"])))
            values[item.id] = metrics
        if open_pairs:
            scores = self.scorer.score_pairs([(prediction, gold) for _, prediction, gold in open_pairs])
            for (item_id, _, _), value in zip(open_pairs, scores, strict=True):
                values[item_id]["bertscore_f1"] = value.f1
                values[item_id]["bertscore_f1_official"] = value.f1
        self._coverage = level_coverage([item for item, *_ in entries])
        return values

    def metric_settings(self) -> dict[str, Any]:
        return {
            "bertscore": self.scorer.describe(),
            "judge_input": self.judge_input,
            "level_coverage": self._coverage,
            "iou_thresholds": list(IOU_THRESHOLDS),
        }

    def score_notes(self) -> list[str]:
        notes = []
        if not self.scorer.spec.official:
            notes.append(
                f"BERTScore used {self.scorer.describe()['model']}, layer {self.scorer.spec.layer}, not the "
                "paper's bert-base-multilingual-cased layer 9; its values are not comparable to Table 4's."
            )
        if self.judge_input != "raw":
            notes.append(
                "The judge and BERTScore read the replies with think blocks removed (-S judge_input=stripped); "
                "the official code sends the raw reply."
            )
        partial = [
            f"{language}: {counts['tasks_with_level']} of {counts['tasks']} tasks, "
            f"{counts['items_with_level']} of {counts['items']} items"
            for language, counts in self._coverage.items()
            if counts["items_with_level"] < counts["items"]
        ]
        if partial:
            notes.append(
                "L1-L3 (partial) average only the items whose SFE task has a cognitive level (record field, "
                f"-S levels=FILE, or the {len(TASK_LEVELS)} tasks §3.2 names): "
                + "; ".join(partial)
                + ". The paper's L columns cover every task; they are not comparable."
            )
        return notes

    # -- report -----------------------------------------------------------------------------

    def table_layout(self) -> list[dict[str, Any]]:
        """Table 3 (Average and disciplines, en/zh) then Table 4 (levels, question types, en/zh).

        "EM IoU" is the paper's column (mean IoU over parsed answers, the official aggregation);
        "EM IoU (unparseable = 0)" is the strict score of every box item. L1-L3 are labelled
        partial, with the share of items they cover beside them (`level_covered`).
        """

        def pair(
            prefix: str,
            label: str,
            dimension: str,
            tail: list[str],
            *,
            crossed: bool = False,
            fmt: str = TABLE_FORMAT,
        ) -> list[dict[str, Any]]:
            """An en and a zh column; `crossed` dimensions are keyed "{prefix}|{language}"."""
            return [
                {
                    "key": f"{prefix}:{language}",
                    "label": label.format(language=language)
                    if "{language}" in label
                    else f"{label} {language}",
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
            columns = pair(level, f"{level} {{language}} (partial)", "level_language", average, crossed=True)
            groups.append({"name": f"{level} (partial)", "columns": columns})
        groups += [
            {
                "name": "Items in L1-L3",
                "columns": pair(
                    "covered",
                    "items in L1-L3 % {language}",
                    "language",
                    ["metrics", "level_covered"],
                    fmt=".1f",
                ),
            },
            {
                "name": "Exact Match (IoU)",
                "columns": pair("iou", "EM IoU", "language", ["metrics", "iou_parsed_only"]),
            },
            {
                "name": "Exact Match (IoU, unparseable = 0)",
                "columns": pair(
                    "iou_strict", "EM IoU {language} (unparseable = 0)", "language", ["tasks", "grounding"]
                ),
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
                "name": "Open Question (BERTScore, unparseable = 0)",
                "columns": pair(
                    "bert_official",
                    "Open BERTScore {language} (official, unparseable = 0)",
                    "language",
                    ["metrics", "bertscore_f1_official"],
                    fmt=".3f",
                ),
            },
            {
                "name": "Open Question (LLM)",
                "columns": pair("open", "Open LLM", "language", ["tasks", "open_ended"]),
            },
            {"name": "MCQ (LLM)", "columns": pair("mcq", "MCQ LLM", "language", ["tasks", "mcq"])},
        ]
        return groups

    def hub_layout(self) -> Any:
        from expvid.suites.sfe.release import SFELayout

        return SFELayout(self.settings.languages)

    def make_sample(self, directory: Path, seed: int, *, force: bool) -> SampleReport:
        from expvid.suites.sfe.sample import make_sfe_sample

        return make_sfe_sample(directory, seed, force=force)


def _chance_group(item: Item, *, by_task: bool = True) -> str:
    """Chance-pool key: language and SFE task id (or language and question type)."""
    kind = str(item.meta["task_id"]) if by_task else item.task
    return f"{item.meta['language']}|{kind}"


def level_coverage(items: Sequence[Item]) -> dict[str, dict[str, int]]:
    """Per language: how many SFE tasks and items have a cognitive level (are in an L column)."""
    coverage: dict[str, dict[str, int]] = {}
    for language in sorted({str(item.meta["language"]) for item in items}):
        subset = [item for item in items if item.meta["language"] == language]
        tasks = {str(item.meta["task_id"]) for item in subset}
        with_level = {str(item.meta["task_id"]) for item in subset if item.level is not None}
        coverage[language] = {
            "tasks": len(tasks),
            "tasks_with_level": len(with_level),
            "items": len(subset),
            "items_with_level": sum(item.level is not None for item in subset),
        }
    return coverage


def _box_metrics(item: Item, extraction: Extraction, response: str | None) -> dict[str, float | None]:
    """Execution success, parsed-only IoU (the paper's EM IoU), best-pair IoU and accuracy at IoU t.

    acc@t reproduces the official aggregation (IoU strictly above t; an unparseable answer, IoU -1,
    counts 0); box_acc@t is the same over the box items alone.
    """
    failed = extraction.status is ExtractionStatus.FAILED
    gold_lists = [box.as_list() for box in item.answer]  # type: ignore[union-attr]
    iou = prediction_order_greedy_iou(gold_lists, extraction.value) if extraction.ok else None
    metrics: dict[str, float | None] = {
        "exec_success": None if failed else 100.0 if extraction.ok else 0.0,
        "iou_parsed_only": None if iou is None else 100.0 * iou,
        "iou_best_pair": None,
    }
    if not failed:
        lenient = extract_boxes(split_reasoning(response or "")[0], item)
        metrics["iou_best_pair"] = 100.0 * greedy_box_iou(lenient.value, item.answer) if lenient.ok else 0.0  # type: ignore[arg-type]
    for threshold in IOU_THRESHOLDS:
        hit = 100.0 if iou is not None and iou > threshold else 0.0
        metrics[acc_key(threshold)] = hit
        metrics[box_acc_key(threshold)] = hit
    return metrics
