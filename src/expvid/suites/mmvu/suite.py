"""MMVU as its paper and released code run it, written only against `expvid.suites.api`.

Facts (Zhao et al., 2025, arXiv 2501.12380; code `yale-nlp/MMVU`; data `hf:yale-nlp/MMVU`):
- Data: the public split is `validation.json` (1,000 of the 3,000 questions; the 2,000 test
  questions are hidden): records `id`, `video` (a Hub URL; the file is `videos/<Subject>/<n>.mp4` of
  the dataset repo), `youtube_url`, `question_type` ("multiple-choice" | "open-ended"),
  `metadata` {`subject`, `textbook`, `knowledge`, `rationale`}, `question`, `choices` (A-E; empty
  strings for open questions), `answer` (a letter, or the short answer).
- Prompts (§4.1, appendix B.2, `utils/constant.py`): chain of thought (Table 3's setting, default)
  or direct answer, per question type; options as "A: text" lines; frames before the text.
- Decoding (appendix B.1): temperature 1.0, at most 1024 new tokens.
- Frames (Table 10): 32 for the API models, fewer or 1 fps for open models; the official reader
  decodes every frame and keeps `np.linspace(0, n - 1, N, dtype=int)` of them at the source size.
- Accuracy (§4.1, appendix B.3, `acc_evaluation.py`): GPT-4o judges EVERY answer, multiple choice
  included, with the structured prompt {"extracted_answer", "correct"}, called with OpenAI structured
  output (`beta.chat.completions.parse(response_format=EvaluationOutput)`, max_tokens 128); score =
  correct / all. Here the same schema is sent as structured output where the judge's provider takes
  it, and a reply is read as the official call reads it (`-S judge_reply=official`: the whole reply is
  that JSON) or leniently; a reply without a readable verdict is a judge failure (counted), where the
  official code counts it wrong; the strict letter reading of multiple-choice replies is reported
  beside it (`metrics.mc_strict`).
- Table 3 reports test-set disciplines and the validation average: runs here are on validation,
  so the reference rows fill "Avg. Validation" only (the test numbers are kept in the JSON).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ValidationError

from expvid.suites.api import (
    AnswerType,
    FrameOptions,
    GenerationDefaults,
    Item,
    JudgeInput,
    JudgeReplyError,
    LevelRule,
    LevelSpec,
    RecordError,
    ResponseSchema,
    SampleReport,
    SuiteSettings,
    TaskSpec,
    VideoQASuite,
    VideoRef,
    describe_validation_error,
    extract_answer,
    frame_preset_setting,
    judge_input_setting,
    sampling_setting,
    setting,
)

RELEASE_FILE = "validation.json"
QUESTION_TYPES = {"multiple-choice": "multiple_choice", "open-ended": "open_ended"}
TASKS = (
    TaskSpec("multiple_choice", None, AnswerType.CHOICE, "Multiple-choice", "MC", RELEASE_FILE, "accuracy"),
    TaskSpec("open_ended", None, AnswerType.FREE_TEXT, "Open-ended", "Open", RELEASE_FILE, "accuracy"),
)
#: The paper's disciplines and their subjects (appendix A.2, Tables 6-9). lmms-eval's port files
#: Materials Science under Science; the paper lists it with Engineering.
DISCIPLINES: dict[str, tuple[str, ...]] = {
    "Science": ("Astronomy", "Biology", "Chemistry", "Electromagnetism", "Geography", "Mechanics",
                "Modern Physics", "Neurobiology", "Thermodynamics"),
    "Healthcare": ("Basic Medicine", "Clinical Medicine", "Dentistry", "Pharmacy", "Preventive Medicine"),
    "Humanities & Social Sci.": ("Art", "Economics", "History", "Law", "Literature", "Management"),
    "Engineering": ("Biomedical Engineering", "Civil Engineering", "Computer Science", "Electrical Engineering",
                    "Electronics and Communication", "Materials Science", "Mechanical Engineering"),
}  # fmt: skip
DISCIPLINE_OF = {subject: discipline for discipline, subjects in DISCIPLINES.items() for subject in subjects}
#: Table 10's input frames per model (multi-image models), and 1 fps for its video models.
FRAME_PRESETS = {
    **{name: FrameOptions(counts={"all": 32}) for name in ("gpt-4o", "gpt-4o-mini", "o1", "gemini", "claude-3.5-sonnet", "grok-2-vision")},
    **{name: FrameOptions(counts={"all": n}) for name, n in (("phi-3.5-vision", 16), ("llava-next-video-7b", 16), ("pixtral-12b", 8), ("llama-3.2-vision", 8), ("aria", 8), ("llava-next-video-34b", 8), ("internvl2.5", 4), ("idefics3", 4), ("deepseek-vl2", 2))},
    **{name: FrameOptions(fps=1.0) for name in ("qwen2-vl", "videollama2", "llava-onevision", "internvideo2")},
}  # fmt: skip
_CORRECT = re.compile(r"""["']?correct["']?\s*:\s*["']?(true|false)\b""", re.IGNORECASE)


@cache
def prompt(name: str) -> str:
    return resources.files(__package__).joinpath("prompts", name).read_text(encoding="utf-8")


class MMVUSettings(SuiteSettings):
    """What may change in an MMVU run besides the generic options."""

    prompt: Literal["cot", "direct"] = setting(
        "cot", help="Chain of thought (Table 3) or direct answer (Figure 4).", paper="MMVU §4.1, appendix B.2"
    )
    frame_preset: str | None = frame_preset_setting(
        "A Table 10 model's input frames (32 for the API models, 1 fps for qwen2-vl, ...).",
        paper="MMVU Table 10",
    )
    sampling: Literal["official", "strict"] = sampling_setting(
        "yale-nlp/MMVU utils/video_process.py read_video"
    )
    judge_input: JudgeInput = judge_input_setting(
        "What the judge reads: the whole reply (raw, as acc_evaluation.py) or without think blocks (stripped)."
    )
    judge_temperature: float = setting(
        0.0,
        help="The judge's temperature, 0-2: 0 (repeatable); the official code calls GPT-4o at 1.0 "
        "(generate_from_openai_chat_completion_structured_format's default).",
        paper="yale-nlp/MMVU utils/api_utils.py",
        scoring=True,
        ge=0.0,
        le=2.0,
    )
    judge_reply: Literal["official", "lenient"] = setting(
        "official",
        help="How a judge reply is read: official = as the official structured call reads it, the JSON "
        'object {"extracted_answer": str, "correct": bool} and nothing else (anything else is a judge '
        'failure; the official code counts it wrong); lenient = the last "correct": true/false anywhere in '
        "the reply, Python's True/False too (for a judge that cannot return structured output).",
        paper="yale-nlp/MMVU utils/eval_utils.py EvaluationOutput, utils/api_utils.py beta.chat.completions.parse",
        scoring=True,
    )
    frame_presets = FRAME_PRESETS


class MMVUSuite(VideoQASuite):
    """Expert-level multi-discipline video questions (27 subjects), every answer judged by an LLM."""

    name = "mmvu"
    title = "MMVU: expert-level multi-discipline video QA, multiple-choice and open, judged by GPT-4o"
    hub_repo = "yale-nlp/MMVU"
    release_files = (RELEASE_FILE,)
    tasks = TASKS
    levels = (LevelSpec("Overall", tuple(spec.name for spec in TASKS), LevelRule.ITEM_WEIGHTED),)
    generation = GenerationDefaults(temperature=1.0, max_tokens=1024, source="MMVU appendix B.1")
    default_judge_model = "gpt-4o"
    judge_choices = True  # the paper's GPT-4o judges multiple-choice answers too
    judge_max_tokens = 128  # acc_evaluation.py
    default_frames: ClassVar[dict[str, int]] = {"all": 32}
    default_resolution = (None, None)  # the official reader sends frames at the source size
    frame_presets = FRAME_PRESETS
    reference_file = "reference_table3.json"
    metric_units: ClassVar[dict[str, str]] = {"mc_strict": "%"}
    offline_note = (
        "MMVU answers were judged OFFLINE (strict letter reading for multiple choice; normalised, numeric or "
        "MiniLM match for open answers), not by the paper's GPT-4o judge; not comparable to the paper's."
    )
    #: lmms-eval's own MMVU tasks, one for the whole set; their logged metric names the item.
    lmms_eval_tasks: ClassVar[dict[str, str | None]] = {"mmvu_val": None, "mmvu_val_cot": None}
    Settings = MMVUSettings
    settings: MMVUSettings

    def task_of(self, record: dict[str, Any]) -> str | None:
        kind = record.get("question_type")
        return QUESTION_TYPES.get(kind) if isinstance(kind, str) else None

    def record_to_item(self, record: dict[str, Any], root: Path) -> Item:
        missing = [
            key for key in ("id", "question_type", "question", "answer", "metadata") if key not in record
        ]
        task = self.task_of(record)
        if missing or task is None:
            raise RecordError(f"missing field(s): {', '.join(missing)}" if missing else f"question_type {record['question_type']!r} is not one of {', '.join(QUESTION_TYPES)}")  # fmt: skip
        metadata = record["metadata"] if isinstance(record["metadata"], dict) else {}
        subject = metadata.get("subject")
        if subject not in DISCIPLINE_OF:
            raise RecordError(f"subject {subject!r} is not one of the paper's 27 subjects")
        source = video_path(record)
        options = (
            {k: str(v) for k, v in (record.get("choices") or {}).items()}
            if task == "multiple_choice"
            else None
        )
        answer = str(record["answer"]).strip()
        if options is not None and answer not in options:
            raise RecordError(f"answer {answer!r} is not one of the choices {list(options)}")
        try:
            return Item(
                id=str(record["id"]),
                source_id=str(record["id"]),
                suite=self.name,
                task=task,
                discipline=DISCIPLINE_OF[subject],
                media=VideoRef(path=str((root / source).resolve()), source_path=source),
                question=str(record["question"]),
                options=options,
                answer=answer if options is not None else [answer],
                answer_type=AnswerType.CHOICE if options is not None else AnswerType.FREE_TEXT,
                meta={"video_id": source, **metadata},
            )
        except ValidationError as error:
            raise RecordError(describe_validation_error(error)) from None

    def prompt_text(self, item: Item) -> str:
        """The official template; options as `optionized_str` ("A: text" lines in the record's order)."""
        options = "\n".join(f"{key}: {value}" for key, value in (item.options or {}).items())
        template = Template(prompt(f"{self.settings.prompt}_{item.task}.txt"))
        return template.substitute(question=item.question, optionized_str=options)

    def judge_prompts(self) -> dict[str, tuple[str, str]]:
        return {task.name: (prompt(f"judge_{task.name}.system.txt"), prompt(f"judge_{task.name}.user.txt")) for task in TASKS}  # fmt: skip

    def judge_response_schema(self) -> ResponseSchema:
        """The official call's `response_format=EvaluationOutput`, as the openai SDK sends it."""
        return ResponseSchema(name="EvaluationOutput", json_schema=evaluation_output_schema())

    def judge_protocol(self) -> str:
        return (
            f"{self.title}: the paper's judge prompts, structured output EvaluationOutput; "
            f"reply read {self.settings.judge_reply}; score = mean x 100"
        )

    def parse_judge_reply(self, reply: str | None) -> float:
        """The verdict in a judge reply, read as `-S judge_reply` says (see `read_official_reply`)."""
        if self.settings.judge_reply == "official":
            return read_official_reply(reply)
        found = _CORRECT.findall(reply or "")
        if not found:
            raise JudgeReplyError(f'no "correct": true/false in the reply: {(reply or "")[:80]!r}')
        return 1.0 if found[-1].lower() == "true" else 0.0

    def extra_metrics(self, entries: Any) -> dict[str, dict[str, float | None]]:
        """Multiple choice read by strict letter extraction, beside the judge (`mc_strict`, 0 or 100)."""
        values: dict[str, dict[str, float | None]] = {}
        for item, _extraction, _judgment, response in entries:
            if item.answer_type is AnswerType.CHOICE:
                strict = extract_answer(response, item)
                right = 100.0 * (strict.ok and strict.value == item.answer)
                values[item.id] = {"mc_strict": None if response is None else right}
        return values

    def table_layout(self) -> list[dict[str, Any]]:
        by_discipline = [{"key": d, "label": d, "kind": "cell", "path": ["disciplines", d, "levels", "Overall"]} for d in DISCIPLINES]  # fmt: skip
        return [
            {
                "name": "Validation",
                "columns": [{"key": "Overall", "label": "Avg. Validation", "kind": "level"}],
            },
            {
                "name": "Question Type",
                "columns": [{"key": s.name, "label": s.column, "kind": "task"} for s in TASKS],
            },
            {"name": "Discipline (validation)", "columns": by_discipline},
        ]

    def lmms_eval_item_id(self, metrics: dict[str, Any]) -> str | None:
        """lmms-eval's `mmvu_process_results` logs {"accuracy": {"question_id": doc["id"], ...}}."""
        value = metrics.get("accuracy")
        return str(value["question_id"]) if isinstance(value, dict) and "question_id" in value else None

    def make_sample(self, directory: Path, seed: int, *, force: bool) -> SampleReport:
        from expvid.suites.mmvu.sample import make_mmvu_sample

        return make_mmvu_sample(directory, seed, force=force)


# The official judge's reply (`utils/eval_utils.py`), parsed as the openai SDK parses it. No
# docstring: pydantic would put it in the schema as a description, which the official one lacks.
class EvaluationOutput(BaseModel):
    extracted_answer: str
    correct: bool


def evaluation_output_schema() -> dict[str, Any]:
    """`EvaluationOutput` as a strict JSON schema: what `client.beta.chat.completions.parse` sends."""
    return {**EvaluationOutput.model_json_schema(), "additionalProperties": False}


def read_official_reply(reply: str | None) -> float:
    """The official reading: the whole reply is `EvaluationOutput` JSON (`message.parsed` is
    `EvaluationOutput.model_validate_json(content)`), else no verdict. Under structured output a
    provider never returns anything else; a reply such as `{"correct": True}` (Python's literal,
    which the prompt's wording invites without it) is unreadable here, where the lenient reading
    would take it for a verdict the official call cannot produce."""
    try:
        parsed = EvaluationOutput.model_validate_json(reply or "")
    except ValidationError as error:
        problem = error.errors()[0].get("msg", "invalid")
        raise JudgeReplyError(f"not the EvaluationOutput JSON ({problem}): {(reply or '')[:80]!r}") from None
    return 1.0 if parsed.correct else 0.0


def video_path(record: dict[str, Any]) -> str:
    """The video's path in the dataset repo: lmms-eval's `video_path`, or the path in the `video` URL."""
    raw = record.get("video_path") or record.get("video")
    if not isinstance(raw, str) or not raw.strip():
        raise RecordError("no video (a `video` URL or a `video_path`)")
    match = re.search(r"/resolve/[^/]+/(.+)$", raw)
    return match.group(1) if match else raw.strip().lstrip("./")
