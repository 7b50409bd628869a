"""`VideoQASuite`: the common case, written once.

Multiple-choice and open questions about videos, in one release file (a JSON array, JSON Lines, or
parquet as Hugging Face publishes datasets; `read_records` reads another format),
open answers decided by an LLM judge with the paper's prompt. A suite of that kind states its
release files, how a record becomes an item (`task_of`, `record_to_item`), its prompt
(`prompt_text`) and its judge protocol (`judge_prompt`, `parse_judge_reply`); loading, chance
baselines, frames, extraction, judging and scoring come from here and from `Suite`.

Judging: open answers always go to the judge; multiple-choice answers too when the paper judged
them (`judge_choices = True`: the judge reads the reply and decides, as some papers' GPT-4o judges do), else
they are read by strict letter extraction. What the judge reads is the reply as written, or
without its think blocks (`judge_input`, a setting the suite declares). Without `--judge` the
`OfflineMatchJudge` decides, labelled offline everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar, Unpack

from expvid.models.factory import create_backend
from expvid.models.types import ResponseSchema
from expvid.schema import AnswerType, DataError, Item, ItemScore, Judgment, RecordProblem
from expvid.schema.dataset import Dataset
from expvid.scoring import Extraction, extract_answer, score_item
from expvid.scoring.extraction import extract_reply_text
from expvid.scoring.judges.prompted import OfflineMatchJudge, PromptedJudge
from expvid.suites.judge_adapter import JudgeAdapter
from expvid.suites.parquet_io import PARQUET_SUFFIX
from expvid.suites.protocol import LoadOptions
from expvid.suites.records import RecordReader, read_json_release, read_parquet_release, text_id
from expvid.suites.release_io import release_root, wanted_tasks
from expvid.suites.suite import Suite


class VideoQASuite(Suite):
    """Base class for a video QA suite with an LLM judge (see the module docstring)."""

    #: The release's question file(s), relative to the root; the first one present is read.
    release_files: ClassVar[tuple[str, ...]]
    #: The record field holding its id.
    id_field: ClassVar[str] = "id"
    #: What makes two records the same question (what a duplicate's message names); default `id_field`.
    duplicate_key: ClassVar[str | None] = None
    #: Whether the judge also decides multiple-choice answers (the paper judged every answer).
    judge_choices: ClassVar[bool] = False
    judge_scale = 1.0
    #: The judge's token budget and temperature (the paper's, or its code's).
    judge_max_tokens: ClassVar[int] = 128
    #: What the offline judge says of itself in every report.
    offline_note: ClassVar[str] = ""

    # -- what a suite of this kind writes ------------------------------------------------------------

    def task_of(self, record: dict[str, Any]) -> str | None:
        """The task of a record, as far as it can be read (None: unknown)."""
        raise NotImplementedError

    def record_to_item(self, record: dict[str, Any], root: Path) -> Item:
        """The item of a record; `expvid.suites.records.RecordError` with a one-line reason otherwise."""
        raise NotImplementedError

    def judge_prompts(self) -> dict[str, tuple[str, str]]:
        """The paper's judge prompts by key (a task name): (system text, user template with `{field}`
        slots filled by `judge_fields`). All of them make the judge's identity."""
        raise NotImplementedError

    def judge_response_schema(self) -> ResponseSchema | None:
        """The JSON reply the paper's judge call asks for as structured output (None: plain text).
        Sent where the judge's provider takes it; the prompt asks for it either way."""
        return None

    def judge_protocol(self) -> str:
        """How the judge decides, in one line (part of the judge's identity: judgments made under
        another protocol are not reused)."""
        return f"{self.title or self.name}: the paper's judge prompt; score = mean x 100"

    def judge_prompt(self, item: Item) -> tuple[str, str]:
        """The judge prompt for this item: by default the one keyed by its task."""
        return self.judge_prompts()[item.task]

    def judge_fields(self, item: Item, prediction: str) -> dict[str, str]:
        """What fills the judge template's slots: question, options ("A: text" lines), answer, prediction."""
        answer = item.answer if isinstance(item.answer, str) else "; ".join(str(a) for a in item.answer or [])  # type: ignore[union-attr]
        options = "\n".join(f"{key}: {value}" for key, value in (item.options or {}).items())
        return {"question": item.question, "options": options, "answer": answer, "prediction": prediction}

    def parse_judge_reply(self, reply: str | None) -> float:
        """The judge's reply as a score on `judge_scale`; `JudgeReplyError` when it says none."""
        raise NotImplementedError

    # -- loading ----------------------------------------------------------------------------------------

    def release_file(self, root: Path) -> Path:
        for name in self.release_files:
            if (root / name).is_file():
                return root / name
        raise DataError(f"{root}: no {self.name} question file (looked for {', '.join(self.release_files)})")

    def load(self, root: Path, **options: Unpack[LoadOptions]) -> Dataset:
        """Every record of the release file as an item or an invalid record (file:line)."""
        root_path = release_root(root, self.name)
        names = (spec.name for spec in self.tasks)
        wanted = wanted_tasks(options.get("tasks"), names, suite_label=self.name, noun="task")
        path = self.release_file(root_path)
        dataset = Dataset(
            suite=self.name, root=root_path, tasks=tuple(spec for spec in self.tasks if spec.name in wanted)
        )
        reader = RecordReader(
            task_of=self.task_of,
            to_item=lambda record: self.record_to_item(record, root_path),
            source_id=lambda record: text_id(record.get(self.id_field)),
            key_name=self.duplicate_key or self.id_field,
        )
        reader.read(dataset, path, self.read_records(dataset, path), wanted)
        if options.get("strict") and dataset.problems:
            raise DataError(dataset.problems)
        self.remember_chance_answers(dataset)
        return dataset

    def read_records(
        self, dataset: Dataset, path: Path
    ) -> Iterable[tuple[int, dict[str, Any] | RecordProblem]]:
        """The release file's records with their line (or row) numbers: parquet by its suffix, else a
        JSON array or JSON Lines. Override for another format (CSV, ...): yield (number, record dict)
        and record the file's hash in `dataset.file_hashes` (the run's data fingerprint)."""
        if path.suffix.lower() == PARQUET_SUFFIX:
            return read_parquet_release(dataset, path)
        return read_json_release(dataset, path)

    def item_from_record(self, record: dict[str, Any], task: str | None, root: Path) -> Item:
        return self.record_to_item(record, root)

    def hub_layout(self) -> Any:
        """The release file and the videos its records name, fetched by their repo paths."""
        from expvid.suites.release_layout import TaskFilesLayout

        return TaskFilesLayout(self) if self.hub_repo else None

    # -- answers -----------------------------------------------------------------------------------------

    def judged(self, item: Item) -> bool:
        return item.answer_type is AnswerType.FREE_TEXT or (
            self.judge_choices and item.answer_type is AnswerType.CHOICE
        )

    def extract(self, response: str | None, item: Item) -> Extraction:
        """A judged answer is the reply's text (the judge reads it); a letter is extracted strictly."""
        return extract_reply_text(response) if self.judged(item) else extract_answer(response, item)

    def needs_judge(self, item: Item, extraction: Extraction) -> bool:
        return extraction.ok and self.judged(item)

    def may_need_judge(self, item: Item) -> bool:
        return self.judged(item)

    def score(self, item: Item, extraction: Extraction, judgment: Judgment | None) -> ItemScore:
        return score_item(item, extraction, judgment, graded_max=self.judge_scale, judged=self.judged(item))

    def build_judge(self, spec: str | None, backend_options: dict[str, Any]) -> QAJudge:
        judge_input = getattr(self.settings, "judge_input", None)
        if spec is None:
            note = self.offline_note or (
                f"{self.name} answers were judged OFFLINE (strict letter reading for multiple choice; normalised, "
                "numeric or MiniLM match for open answers), not by an LLM judge; not comparable to the paper's."
            )
            offline = OfflineMatchJudge(name=f"{self.name}-correct:offline", offline_note=note)
            return QAJudge(self, offline, judge_input)
        temperature = float(getattr(self.settings, "judge_temperature", 0.0))
        llm = PromptedJudge(
            create_backend(spec, **backend_options),
            name=f"{self.name}-correct",
            protocol=self.judge_protocol(),
            parse=self.parse_judge_reply,
            max_tokens=self.judge_max_tokens,
            temperature=temperature,
            response_schema=self.judge_response_schema(),
        )
        for key, (system, template) in self.judge_prompts().items():
            llm.remember(key, system, template)
        return QAJudge(self, llm, judge_input)


class QAJudge(JudgeAdapter):
    """The runner's view of a video QA judge: the suite's prompt for the item, one decision."""

    def __init__(
        self, suite: VideoQASuite, inner: PromptedJudge | OfflineMatchJudge, judge_input: Any
    ) -> None:
        super().__init__(inner, judge_input)
        self.suite = suite

    async def judge(self, item: Item, extraction: Extraction, response: str | None) -> Judgment:
        prediction = self.prediction(extraction, response)
        if isinstance(self.inner, OfflineMatchJudge):
            return await self.inner.decide(item=item, prediction=prediction)
        system, template = self.suite.judge_prompt(item)
        fields = self.suite.judge_fields(item, prediction)
        return await self.inner.decide(
            item_id=item.id, task=item.task, system=system, template=template, fields=fields
        )
