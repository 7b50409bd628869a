"""A scripted "lab model" for the loopback server: answers every prompt of `expvid build` from the sample.

It reads the request the way a model would (the prompt text, the transcript lines, the frames) and
answers from the sample generator's experiment scripts: which step a narration sentence belongs to,
which stage a cue belongs to, which frame number an image shows. So the answers are right for the
sample and follow the prompts' JSON formats; `Faults` makes chosen prompts answer badly (malformed
JSON, refusals, timestamps that are not in the transcript, distractors that are not permutations,
reasoning blocks and code fences) the way real models do.
"""

from __future__ import annotations

import io
import itertools
import json
import random
import re
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from expvid.fakes.models.server import RecordedRequest, Reply
from expvid.media.synth import FrameCodeError, read_frame_code
from expvid.suites.sample.quantities import quantity_question
from expvid.suites.sample.quantity_distractors import quantity_distractors
from expvid.suites.sample.scripts import BLANK_MARK, ExperimentScript, StepScript, load_scripts
from expvid.suites.sample.timeline import plan_timeline

RETRY_MARK = "Your previous reply could not be used"
_CUE = re.compile(r'(?:^|")(\d\d:\d\d\.\d{3}) → (\d\d:\d\d\.\d{3}): (.*?)"?$', re.MULTILINE)
_SPACES = re.compile(r"\s+")

#: Prompt kind -> a phrase only that prompt contains.
KINDS: tuple[tuple[str, str], ...] = (
    ("curation", "Rate the quality of the following ASR transcript"),
    ("materials", 'specializing in extracting **"materials"**'),
    ("tools", "specializing in extracting **tools**"),
    ("material_mcq", "MCQs) for material recognition"),
    ("tool_mcq", "MCQs) for tool recognition"),
    ("quantity", "for **quantity recognition**"),
    ("alignment", "You will be given two inputs about the same video segment"),
    ("operation_mcq", "for scientific experiment video understanding given the ASR caption"),
    ("segmentation", "segment a scientific experiment video transcript"),
    ("steps", "decomposing scientific experiment procedures into atomic steps"),
    ("ordering", "a multiple-choice question about the correct sequence of experimental steps"),
    ("findings", "Summarize the findings of the paper"),
    ("blanks", "Draft fill-in-the-blank questions"),
    ("caption", "These frames are sampled in time order"),
    ("blind", "based on the video. Provide your final answer"),
)


def _norm(text: str) -> str:
    return _SPACES.sub(" ", text).strip().casefold()


@dataclass
class Faults:
    """Deliberately bad replies. Kinds are the names in `KINDS`."""

    malformed_first: set[str] = field(default_factory=set)  # first attempt: broken JSON
    refuse_first: set[str] = field(default_factory=set)  # first attempt: "I can't help with that."
    refuse_always: set[str] = field(default_factory=set)
    #: video_id -> seconds added to each segment's start_time (index = segment number - 1).
    segment_shift: dict[str, list[float]] = field(default_factory=dict)
    #: video_id -> the whole segmentation is invented times (every time 2.6 s off) on every attempt.
    invented_times: set[str] = field(default_factory=set)
    bad_permutation: str | None = None  # "first" (fixed on retry) or "always"
    think_and_fence: bool = False  # wrap JSON replies as reasoning models do
    #: Draft items that leak, one known way per task (the audits' calibration set):
    #: materials: the question quotes the narration; tools: out-of-domain distractors; operation: the
    #: correct option padded to twice the others' length; ordering: single-swap distractors (the
    #: correct order is their Kendall medoid; this is what the lab always does); experimental
    #: conclusion: the answer is a word of the title; scientific discovery: the answer is spoken in the
    #: narration. Quantity and the other Level-2 tasks stay clean (controls).
    leaky: bool = False


#: Distractors no laboratory would confuse with a tool (the `leaky` lab's tool MCQs).
OUT_OF_DOMAIN_TOOLS = ("garden hose", "claw hammer", "steering wheel")


@dataclass
class StepRef:
    script: ExperimentScript
    number: int  # global, 1-based
    stage: int  # 1-based

    @property
    def step(self) -> StepScript:
        return self.script.steps[self.number - 1]


class ScriptedLab:
    """The responder: `LoopbackServer(ScriptedLab(...))`."""

    def __init__(
        self,
        faults: Faults | None = None,
        *,
        seed: int = 0,
        caption_video: str | None = None,
        scripts: Iterable[ExperimentScript] = (),
        redraft: Iterable[str] = (),
    ) -> None:
        """`caption_video`: which experiment's frames the captioner is shown (frame numbers restart at 0
        in every video, so the number alone does not say which video a frame is from). `scripts`: more
        experiments to know besides the sample's (a synthetic campaign's replicates). `redraft`:
        experiments whose MCQs this lab drafts with other distractors than the default lab does (a
        model asked again, as `--redo level1:ID` does, answers differently)."""
        self.redraft = set(redraft)
        self.faults = faults or Faults()
        self.caption_video = caption_video
        self.scripts = {s.video_id: s for s in [*load_scripts(), *scripts]}
        self.timelines = {vid: plan_timeline(s, seed) for vid, s in self.scripts.items()}
        self._pieces: list[tuple[str, StepRef]] = []
        for script in self.scripts.values():
            number = 0
            for stage_number, stage in enumerate(script.stages, start=1):
                for _ in stage.steps:
                    number += 1
                    ref = StepRef(script, number, stage_number)
                    self._pieces.append((_norm(ref.step.narration), ref))
        self.kinds: Counter[str] = Counter()
        self.unknown: list[str] = []
        self._lock = threading.Lock()

    # -- knowledge ---------------------------------------------------------------------------

    def step_of(self, text: str) -> StepRef | None:
        """The step whose narration contains `text` (a sentence or a cue), else None (e.g. the slide)."""
        wanted = _norm(text)
        if not wanted:
            return None
        for narration, ref in self._pieces:
            if wanted in narration or narration in wanted:
                return ref
        return None

    def script_by_title(self, text: str) -> ExperimentScript | None:
        return next((s for s in self.scripts.values() if f"Title: {s.title}" in text), None)

    # -- the responder -----------------------------------------------------------------------

    def __call__(self, request: RecordedRequest) -> Reply | str:
        text = "\n".join(request.texts)
        kind = next((k for k, phrase in KINDS if phrase in text), None)
        retry = RETRY_MARK in text
        with self._lock:
            self.kinds[kind or "unknown"] += 1
            if kind is None:
                self.unknown.append(text[:200])
        if kind is None:
            return Reply.error(400, "scripted lab: unknown prompt")
        faults = self.faults
        if kind in faults.refuse_always or (kind in faults.refuse_first and not retry):
            return "I'm sorry, but I can't help with that."
        if kind in faults.malformed_first and not retry:
            return '{"materials": ["unterminated'  # broken JSON
        if kind == "caption":
            return self._caption(request)
        if kind == "blind":
            return Reply.ok(self._blind(text), prompt_tokens=max(1, len(text) // 4))
        answer = getattr(self, f"_{kind}")(text, retry)
        if isinstance(answer, Reply | str):
            return answer
        body = json.dumps(answer, ensure_ascii=False)
        if faults.think_and_fence:
            body = f"<think>Let me read the transcript carefully.</think>\nHere is the JSON:\n```json\n{body}\n```"
        # Usage as a server would report it: about four characters per prompt token (completion
        # tokens default to the reply's word count).
        return Reply.ok(body, prompt_tokens=max(1, len(text) // 4))

    # -- 3.1 ---------------------------------------------------------------------------------

    def _curation(self, text: str, retry: bool) -> dict[str, Any]:
        duration = float(re.search(r"Video duration: \S+ \(([\d.]+) s\)", text).group(1))  # type: ignore[union-attr]
        cues = [(_seconds(a), _seconds(b)) for a, b, _ in _CUE.findall(text)]
        gaps = [cues[0][0]] + [b[0] - a[1] for a, b in itertools.pairwise(cues)]
        longest = max(gaps)
        continuity = 5.0 if longest < 10 else (3.0 if longest < 20 else 2.0)
        alignment = 5.0 if duration - cues[-1][1] < 15 else 3.0
        return {
            "continuity": continuity,
            "alignment": alignment,
            "clarity": 4.5,
            "integrity": 4.5,
            "focus": 4.5,
            "comment": f"longest pause {longest:.1f} s",
        }

    # -- G.1 ---------------------------------------------------------------------------------

    def _asr(self, text: str) -> str:
        match = re.search(r'ASR caption: "(.*)"', text)
        return match.group(1) if match else ""

    def _materials(self, text: str, retry: bool) -> dict[str, Any]:
        ref = self.step_of(self._asr(text))
        return {"materials": [ref.step.material] if ref else []}

    def _tools(self, text: str, retry: bool) -> dict[str, Any]:
        ref = self.step_of(self._asr(text))
        return {"tools": [ref.step.tool] if ref else []}

    def _mcq(self, correct: str, distractors: list[str], question: str) -> dict[str, Any]:
        options = {"A": correct}
        for letter, text in zip("BCD", distractors, strict=False):
            options[letter] = text
        return {"question": question, "options": options, "answer": "A"}

    def _experiment_of(self, asr: str, ref: StepRef) -> str:
        """The experiment a narration sentence is from (a replicate names itself, see campaign_sources)."""
        match = re.search(r"In replicate (\d+):", asr)
        return str(800000 + int(match.group(1))) if match else ref.script.video_id

    def _pool(self, candidates: list[str], target: str, seed: str, asr: str = "") -> list[str]:
        """Distractors: not the target, and (as the G.1 prompts' feedback asks) nothing the clip's
        narration mentions."""
        ref = self.step_of(asr) if asr else None
        if ref is not None and self._experiment_of(asr, ref) in self.redraft:
            seed = f"{seed}:redrafted"
        wanted = _norm(target)
        spoken = set(re.findall(r"[a-z0-9]+", asr.casefold()))
        pool = [
            c
            for c in dict.fromkeys(candidates)
            if wanted not in _norm(c)
            and _norm(c) not in wanted
            and not any(len(w) >= 4 and w in spoken for w in re.findall(r"[a-z0-9]+", c.casefold()))
        ]
        random.Random(seed).shuffle(pool)
        return pool[:3]

    def _material_mcq(self, text: str, retry: bool) -> dict[str, Any]:
        target = re.search(r'A target material: "(.*)"', text).group(1)  # type: ignore[union-attr]
        asr = re.search(r'transcription \(ASR\): "(.*)"', text).group(1)  # type: ignore[union-attr]
        ref = self.step_of(asr)
        assert ref is not None
        script = ref.script
        pool = self._pool(
            [*script.distractor_materials, *(s.material for s in script.steps)], target, target, asr
        )
        question = "What material appears in this process?"
        if self.faults.leaky:
            question = f'The narrator says: "{asr}" {question}'
        return self._mcq(target, pool, question)

    def _tool_mcq(self, text: str, retry: bool) -> dict[str, Any]:
        target = re.search(r'Target tool: "(.*)"', text).group(1)  # type: ignore[union-attr]
        asr = re.search(r'- ASR: "(.*)"', text).group(1)  # type: ignore[union-attr]
        ref = self.step_of(asr)
        assert ref is not None
        script = ref.script
        pool = self._pool([*script.distractor_tools, *(s.tool for s in script.steps)], target, target, asr)
        if self.faults.leaky:
            pool = list(OUT_OF_DOMAIN_TOOLS)
        return self._mcq(target, pool, "What laboratory tool is being used in this research step?")

    def _quantity(self, text: str, retry: bool) -> dict[str, Any]:
        ref = self.step_of(self._asr(text))
        if ref is None:
            return {"question": None}
        step = ref.step
        question = quantity_question(step.quantity, step.material, step.quantity_question)
        distractors = quantity_distractors(step.quantity, random.Random(step.quantity))
        return self._mcq(step.quantity, distractors, question)

    def _alignment(self, text: str, retry: bool) -> dict[str, Any]:
        ref = self.step_of(self._asr(text))
        if ref is None:
            return {"has_operation": False, "visible_action": False, "alignment_score": 0}
        caption = re.search(r'Qwen caption: "(.*)"', text).group(1)  # type: ignore[union-attr]
        score = (
            5 if ref.step.tool.casefold() in caption.casefold() else (3 if "not available" in caption else 2)
        )
        return {"has_operation": True, "visible_action": True, "alignment_score": score}

    def _operation_mcq(self, text: str, retry: bool) -> dict[str, Any]:
        ref = self.step_of(self._asr(text))
        assert ref is not None
        script = ref.script
        pool = self._pool(
            [*script.distractor_operations, *(s.operation for s in script.steps)],
            ref.step.operation,
            ref.step.text,
            self._asr(text),
        )
        correct = ref.step.operation
        if self.faults.leaky:
            correct = f"{correct}, carefully and exactly as the written protocol describes for this step"
        return self._mcq(correct, pool, "What operation is performed in this step?")

    def _caption(self, request: RecordedRequest) -> Reply:
        """Read the frame codes of the images, find the step on screen, describe it."""
        steps = []
        for data in request.images:
            image = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
            try:
                frame = read_frame_code(image)
            except FrameCodeError:
                continue
            for vid, timeline in self.timelines.items():
                if self.caption_video is not None and vid != self.caption_video:
                    continue
                for number, (start, end) in enumerate(timeline.steps, start=1):
                    if start <= frame < end:
                        steps.append((vid, number))
        if not steps:
            return Reply.ok("A laboratory bench with equipment is visible.")
        vid, number = Counter(steps).most_common(1)[0][0]
        step = self.scripts[vid].steps[number - 1]
        return Reply.ok(
            f"A hand holds a {step.tool} over a vessel of {step.material}; the label reads {step.quantity}."
        )

    # -- G.2 ---------------------------------------------------------------------------------

    def _cues(self, text: str) -> list[tuple[str, str, StepRef | None]]:
        return [(a, b, self.step_of(t)) for a, b, t in _CUE.findall(text)]

    def _segmentation(self, text: str, retry: bool) -> list[dict[str, Any]]:
        cues = self._cues(text)
        script = next(ref.script for _, _, ref in cues if ref is not None)
        stages: dict[int, list[tuple[str, str]]] = {}
        for start, end, ref in cues:
            if ref is not None:
                stages.setdefault(ref.stage, []).append((start, end))
        shifts = self.faults.segment_shift.get(script.video_id, [])
        invented = script.video_id in self.faults.invented_times
        segments = []
        for number, times in sorted(stages.items()):
            start, end = times[0][0], times[-1][1]
            shift = shifts[number - 1] if number - 1 < len(shifts) else 0.0
            if invented:  # both ends 2.6 s off: more than 2 s from any cue boundary of the sample
                start, end = _clock(_seconds(start) + 2.6), _clock(_seconds(end) + 2.6)
            elif shift:
                start = _clock(_seconds(start) + shift)
            segments.append(
                {
                    "start_time": start,
                    "end_time": end,
                    "title": script.stages[number - 1].name,
                    "description": f"Stage {number} of the procedure.",
                }
            )
        return segments

    def _steps(self, text: str, retry: bool) -> dict[str, Any] | str:
        subtitles = text.split("- Timestamped Subtitles:", 1)[1]
        cues = self._cues(subtitles)
        by_step: dict[int, list[tuple[str, str]]] = {}
        refs: dict[int, StepRef] = {}
        for start, end, ref in cues:
            if ref is not None:
                by_step.setdefault(ref.number, []).append((start, end))
                refs[ref.number] = ref
        if not by_step:
            return "null"
        steps = [
            {
                "step_number": i,
                "action": refs[n].step.text,
                "start_time": times[0][0],
                "end_time": times[-1][1],
            }
            for i, (n, times) in enumerate(sorted(by_step.items()), start=1)
        ]
        return {"atomic_steps": steps, "total_steps": len(steps), "confidence": "high"}

    def _ordering(self, text: str, retry: bool) -> dict[str, Any]:
        block = text.split("**### Correct Sequence:**", 1)[1].split("\n---", 1)[0]
        texts = [re.sub(r"^\d+\.\s*", "", line).strip() for line in block.strip().splitlines()]
        n = len(texts)
        orders = []
        for i in range(n - 1):
            order = list(range(n))
            order[i], order[i + 1] = order[i + 1], order[i]
            orders.append(order)
        orders = orders[:3] if len(orders) >= 3 else [*orders, list(reversed(range(n)))]
        options = {"A": _numbered_inline(texts)}
        for letter, order in zip("BCD", orders, strict=False):
            options[letter] = _numbered_inline([texts[i] for i in order])
        mode = self.faults.bad_permutation
        if mode == "always" or (mode == "first" and not retry):
            options["C"] = _numbered_inline([*texts[:-1], "Discard the plate into the biohazard bin"])
        return {
            "question": "What is the correct sequence of steps for this experimental procedure?",
            "options": options,
            "correct_answer": "A",
        }

    # -- Level 3 -----------------------------------------------------------------------------

    def _findings(self, text: str, retry: bool) -> dict[str, Any]:
        script = self.script_by_title(text)
        assert script is not None
        findings = [{"statement": p, "section": "Results"} for p in script.results]
        findings += [{"statement": p, "section": "Discussion"} for p in script.discussion]
        return {"findings": findings}

    def _blanks(self, text: str, retry: bool) -> dict[str, Any]:
        script = self.script_by_title(text)
        assert script is not None

        def draft(question: Any, section: str) -> dict[str, Any]:
            return {
                "question": question.text.replace(BLANK_MARK, "____"),
                "answers": list(question.answers),
                "section": section,
            }

        if self.faults.leaky:
            return self._leaky_blanks(script)
        return {
            "experimental_conclusion": [draft(q, "Results") for q in script.analysis],
            "scientific_discovery": [draft(q, "Discussion") for q in script.discovery],
        }

    def _leaky_blanks(self, script: ExperimentScript) -> dict[str, Any]:
        """Answers a model can copy: a word of the title, or words the narration speaks."""
        title_word = max(re.findall(r"[A-Za-z]{6,}", script.title), key=len)
        spoken = next(s.tool for s in script.steps[:-1] if s.tool.casefold() in s.narration.casefold())
        return {
            "experimental_conclusion": [
                {
                    "question": "The experiment shows that ____ is the substrate of choice.",
                    "answers": [title_word],
                }
            ],
            "scientific_discovery": [
                {"question": "The key instrument of the protocol is the ____.", "answers": [spoken]}
            ],
        }

    # -- the blind audit ---------------------------------------------------------------------

    def _blind(self, text: str) -> str:
        """A text-only 'model' that always picks the longest option (a classic shortcut)."""
        options = (
            re.findall(r"^([A-J]): (.*)$", text.split("Options:", 1)[1], re.MULTILINE)
            if "Options:" in text
            else []
        )
        if options:
            letter = max(options, key=lambda o: len(o[1]))[0]
            return f"The longest option looks most specific. \\boxed{{{letter}}}"
        if "single number" in text:
            return "\\boxed{1}"
        if "list of numbers" in text:
            return "\\boxed{1, 2}"
        return "\\boxed{unknown}"


def _seconds(clock: str) -> float:
    minutes, seconds = clock.split(":")
    return int(minutes) * 60 + float(seconds)


def _clock(seconds: float) -> str:
    millis = round(seconds * 1000)
    minutes, rest = divmod(millis, 60_000)
    return f"{minutes:02d}:{rest // 1000:02d}.{rest % 1000:03d}"


def _numbered_inline(texts: list[str]) -> str:
    """The G.2.3 example's style: numbers directly after the previous step ("1. a2. b")."""
    return "".join(f"{i}. {t}" for i, t in enumerate(texts, start=1))
