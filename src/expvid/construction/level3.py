"""Level 3 (ExpVid 3.1 and 3.3): the full video, paper sections, a findings summary, blank drafts.

1. The Level-3 video is the source video, or with `trim_slides` the video up to the end of the last
   procedural step that Level 2 found, when narration continues after it (concluding slides, figures
   and data analysis, 3.1: removed "to avoid potential shortcuts"). The cut sits in the silence after
   the last step's narration (`timeline.py`). Without Level-2 steps nothing is trimmed, and the report
   says so.
2. Paper sections (Introduction, Results, Discussion) are read from Markdown or PDF (`papers.py`)
   and written to `papers/<video_id>.md`.
3. The LLM summarizes the findings (the paper's "anchors") and drafts fill-in-the-blank questions of
   both types (experimental analysis = `experimental_conclusion`, scientific discovery) following the
   Figure 13 guidelines. Drafts are for experts to refine: each must have as many answers as blanks,
   one line each, none of them already written in the sentence; others are dropped with the reason.
   A reply without a single usable question is re-asked.
"""

from __future__ import annotations

from typing import Any

from expvid.construction.config import BuildConfig
from expvid.construction.context import BuildContext, LoadedExperiment
from expvid.construction.drafts import ClipSpec, DraftItem, StageOutput
from expvid.construction.llm import DraftFailure, InvalidReply, json_parser
from expvid.construction.papers import PaperError, PaperSections, read_paper
from expvid.construction.prompts import load_prompt, text_file
from expvid.construction.schemas import BlankDraft, BlankDrafts, Findings, norm_text
from expvid.models.spec import model_identity
from expvid.schema import count_blanks

STAGE = "level3"
TASKS = ("experimental_conclusion", "scientific_discovery")
PROMPT_IDS = ("findings_summary", "level3_blanks")


def level3_clip(
    context: BuildContext, experiment: LoadedExperiment, level2: StageOutput | None
) -> tuple[ClipSpec, str]:
    """The Level-3 video spec and a note on trimming."""
    source = experiment.source.video
    assert source is not None
    whole = ClipSpec(
        level=3,
        video_id=experiment.video_id,
        start=0.0,
        end=experiment.video_end,
        source_digest=experiment.video_stamp,
        whole=True,
        suffix=source.suffix.lower(),
    )
    if not context.config.trim_slides:
        return whole, "not trimmed (trim_slides is off)"
    ends = [s.end for seg in (level2.segments if level2 else []) for s in seg.steps if s.end is not None]
    if not ends:
        return whole, "not trimmed: Level 2 found no timed step"
    last = max(ends)
    bounds = experiment.boundaries(context.config.timestamp_tolerance)
    tail = [c for c in bounds.cues if c.start >= last - 1e-6]
    if not tail:
        return whole, "not trimmed: no narration after the last step"
    cut = bounds.pad_end(last, max_pad=context.config.max_pad, ceiling=experiment.video_end)
    spec = ClipSpec(
        level=3, video_id=experiment.video_id, start=0.0, end=cut, source_digest=experiment.video_stamp
    )
    return spec, f"trimmed at {cut:.3f} s (after the last step; {experiment.video_end - cut:.1f} s removed)"


def blanks_check(output_drops: dict[str, dict[str, int]]) -> Any:
    """Keep the usable drafts of each type; count the others by reason; none usable -> re-ask."""

    def problem(draft: BlankDraft) -> str | None:
        blanks = count_blanks(draft.question)
        answers = [a.strip() for a in draft.answers]
        if blanks == 0:
            return "no blank (a run of 2+ underscores) in the question"
        if blanks != len(answers):
            return "number of blanks differs from number of answers"
        if any(not a or "\n" in a for a in answers):
            return "an answer is empty or longer than one line"
        sentence = norm_text(draft.question)
        if any(len(a) >= 3 and norm_text(a) in sentence for a in answers):
            return "an answer is already written in the question"
        return None

    def check(reply: BlankDrafts) -> dict[str, list[BlankDraft]]:
        kept: dict[str, list[BlankDraft]] = {task: [] for task in TASKS}
        drops: dict[str, dict[str, int]] = {}
        for task in TASKS:
            for draft in getattr(reply, task):
                reason = problem(draft)
                if reason is None:
                    kept[task].append(draft)
                else:
                    drops.setdefault(task, {}).setdefault(reason, 0)
                    drops[task][reason] += 1
        if not any(kept.values()):
            reasons = sorted({r for d in drops.values() for r in d})
            raise InvalidReply("no usable question: " + "; ".join(reasons))
        output_drops.clear()
        output_drops.update(drops)
        return kept

    return json_parser(BlankDrafts, check)


def fingerprint(config: BuildConfig, experiment: LoadedExperiment, level2_fingerprint: str | None) -> str:
    """What a saved Level 3 is valid for (the build and `--dry-run` both ask); it depends on Level 2
    (the trim point) through Level 2's saved fingerprint."""
    prompts = [load_prompt(p).sha256 for p in PROMPT_IDS]
    return config.fingerprint(
        STAGE, prompts, text_file("g3_level3_guidelines.txt"), experiment.stamp, model_identity(config.llm),
        level2_fingerprint,
    )  # fmt: skip


async def run_level3(
    context: BuildContext, experiment: LoadedExperiment, level2: StageOutput | None
) -> StageOutput:
    key = fingerprint(context.config, experiment, level2.fingerprint if level2 else None)
    saved = context.state.load(experiment.video_id, STAGE, key)
    context.progress.add(STAGE, 1)
    if saved is not None:
        context.progress.advance(STAGE)
        return saved
    with context.clock.running(STAGE):
        output = await _run(context, experiment, level2, key)
    context.progress.advance(STAGE)
    return output


async def _run(
    context: BuildContext, experiment: LoadedExperiment, level2: StageOutput | None, key: str
) -> StageOutput:
    output = StageOutput(video_id=experiment.video_id, stage=STAGE, fingerprint=key)
    clip, note = level3_clip(context, experiment, level2)
    output.level3_clip = clip
    output.notes["trim"] = note
    source = experiment.source
    if source.paper is None:
        output.problem("no paper (paper.md or paper.pdf): no Level-3 questions")
    else:
        try:
            paper = read_paper(source.paper, title=source.title)
        except PaperError as error:
            output.problem(str(error))
        else:
            output.paper_markdown = paper.markdown()
            if paper.missing:
                output.notes["missing_sections"] = paper.missing
            if len(paper.missing) == 3:
                output.problem(f"{source.paper}: no Introduction, Results or Discussion section found")
            else:
                output.items = await _draft_questions(context, experiment, paper, clip, output)
    context.state.save(output)
    return output


async def _draft_questions(
    context: BuildContext,
    experiment: LoadedExperiment,
    paper: PaperSections,
    clip: ClipSpec,
    output: StageOutput,
) -> list[DraftItem]:
    source = experiment.source
    sections = paper.markdown()
    common = {"title": source.title, "discipline": source.discipline, "paper_sections": sections}
    try:
        async with context.calls:
            findings = await context.llm.ask_prompt("findings_summary", common, json_parser(Findings))
        drops: dict[str, dict[str, int]] = {}
        statements = "\n".join(f"- {f.statement}" for f in findings.value.findings)
        values = {
            **common,
            "findings": statements,
            "guidelines": text_file("g3_level3_guidelines.txt"),
            "n_questions": str(context.config.level3_questions),
        }
        async with context.calls:
            drafted = await context.llm.ask_prompt("level3_blanks", values, blanks_check(drops))
    except DraftFailure as failure:
        output.problem(f"{failure.prompt_id}: {failure.message}", transient=failure.transient, failed=True)
        return []
    for task, reasons in drops.items():
        for reason, count in reasons.items():
            output.drop(task, reason, count)
    assert experiment.transcript is not None
    narration = " ".join(c.text for c in experiment.transcript.cues if c.end <= clip.end + 1e-6)
    items: list[DraftItem] = []
    for task in TASKS:
        for draft in drafted.value[task]:
            question = (
                f"Title: {source.title}\nDiscipline: {source.discipline}\nQuestion: {draft.question.strip()}"
            )
            items.append(
                DraftItem(
                    task=task,
                    video_id=experiment.video_id,
                    draft_key=f"{task}|{norm_text(draft.question)}",
                    category=source.discipline,
                    question=question,
                    answer=[a.strip() for a in draft.answers],
                    asr_caption=narration,
                    clip=clip,
                    drafts=[findings.provenance(), drafted.provenance()],
                    order=(0.0, len(items)),
                    meta={"section": draft.section, "needs_expert_refinement": True},
                )
            )
    return items
