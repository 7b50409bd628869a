"""A scripted QA generator for the loopback server: answers ProMQA generation prompts as a model would.

It reads the prompt the way a model does (the question type from the question line, the steps and
the on-target excerpt from the text) and writes three pairs in the prompt's list format. Its
quality is set per model and per template, so that approval rates differ in a known way:
`bad_pairs[model]` of the three pairs are not procedural questions ("What color is the counter?"),
plus `template_penalty[template]` more (templates without the on-target excerpt cannot name the
right steps). `malformed_first` makes the first reply of chosen models unparseable (re-asked);
`style` writes the list as a model that ignores the prompt's format would (`reply_styles.py`).
The known non-procedural questions are exported so scripted annotators can reject them.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import Counter
from dataclasses import dataclass, field

from reply_styles import ReplyStyle

from expvid.fakes.models.server import RecordedRequest, Reply

BAD_QUESTIONS = ("What color is the counter?", "Is the kitchen tidy?", "What time of day is it?")
BAD_ANSWER = "It does not matter for the recipe."
RETRY_MARK = "Your previous reply could not be used"
_TYPES = {
    "about next step(s)": "next",
    "about missing step(s)": "missing",
    "about order mistake(s)": "order",
    "about preparation mistake(s)": "preparation",
    "about measurement mistake(s)": "measurement",
    "about timing mistake(s)": "timing",
    "about technique mistake(s)": "technique",
    "about temperature mistake(s)": "temperature",
}


def plain(step: str) -> str:
    """ "Microwave-Microwave the mug for 30 seconds" -> "Microwave the mug for 30 seconds." """
    text = step.split("-", 1)[1] if "-" in step else step
    return text.strip().rstrip(".") + "."


def _block(prompt: str, header: str) -> list[str]:
    if header not in prompt:
        return []
    rest = prompt.split(header, 1)[1].splitlines()[1:]
    steps = []
    for line in rest:
        if not line.startswith("- "):
            break
        steps.append(line[2:])
    return steps


def good_pairs(prompt: str, kind: str) -> list[tuple[str, list[str]]]:
    """Three procedural pairs with the right answers, from the on-target excerpt when there is one."""
    if kind == "next":
        steps = _block(prompt, "can be done next:")
        answers = [plain(s) for s in steps] or ["You have completed all the steps."]
        return [("What should I do next?", answers), ("What is the next step?", answers[:1]),
                ("What comes after this?", answers)]  # fmt: skip
    if kind == "missing":
        steps = _block(prompt, "step is missed:") or _block(prompt, "steps are missed:")
        answers = [f"You missed: {plain(s)}" for s in steps] or ["No, you are on track."]
        return [("Did I miss any step?", answers), ("Did I skip anything so far?", answers),
                ("Am I missing something?", answers[:1])]  # fmt: skip
    match = re.search(r"about [a-z]+: (.*)", prompt)
    error = match.group(1).strip().rstrip(".") if match else "something went wrong"
    correct = _block(prompt, "the correct action is:")
    fix = f" The recipe says: {plain(correct[0])}" if correct else ""
    answer = f"No, {error[0].lower() + error[1:]}.{fix}"
    return [(f"Did I get the {kind} right in this step?", [answer]),
            (f"Was there a {kind} mistake just now?", [f"Yes: {error}."]),
            (f"Is my {kind} correct here?", [answer])]  # fmt: skip


def render(pairs: list[tuple[str, list[str]]]) -> str:
    lines = []
    for question, answers in pairs:
        lines.append(f"* {question}")
        lines += [f"    * {answer}" for answer in answers]
    return "\n".join(lines)


@dataclass
class PromqaLab:
    bad_pairs: dict[str, int] = field(default_factory=dict)
    template_penalty: dict[str, int] = field(default_factory=dict)
    malformed_first: set[str] = field(default_factory=set)
    #: Question types whose replies never hold a pair (the unit fails after every re-ask).
    malformed_always: set[str] = field(default_factory=set)
    #: How replies are formatted (None: the prompt's own `* q` / `    * a` list).
    style: ReplyStyle | None = None
    seen: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: RecordedRequest) -> Reply | str:
        text = "\n".join(request.texts)
        kind = next((k for phrase, k in _TYPES.items() if phrase in text), None)
        if kind is None or "# Instruction" not in text:
            return Reply.error(400, "promqa lab: not a ProMQA generation prompt")
        template = _template(text, request.n_images)
        with self._lock:
            self.seen[f"{request.model}|{template}"] += 1
        if kind in self.malformed_always or (
            request.model in self.malformed_first and RETRY_MARK not in text
        ):
            return "Here are some questions: what to do next, and whether anything was missed."
        pairs = good_pairs(text, kind) if template.endswith("target") else _no_excerpt(text, kind)
        bad = min(3, self.bad_pairs.get(request.model, 0) + self.template_penalty.get(template, 0))
        for index in range(bad):
            pairs[len(pairs) - 1 - index] = (BAD_QUESTIONS[index], [BAD_ANSWER])
        shift = int(hashlib.sha256(text.encode()).hexdigest(), 16) % 3
        pairs = pairs[shift:] + pairs[:shift]
        reply = render(pairs) if self.style is None else self.style.render(pairs)
        return Reply.ok(
            reply, prompt_tokens=len(text) // 4 + 85 * request.n_images, completion_tokens=len(reply) // 4
        )


def _template(text: str, images: int) -> str:
    recipe = (
        "dot" if "recipe information as DOT" in text else "image" if "as a graph in" in text else "target"
    )
    return f"{'video' if 'photos taken during the cooking' in text else 'step'}-{recipe}"


def _no_excerpt(text: str, kind: str) -> list[tuple[str, list[str]]]:
    """Without the excerpt the lab cannot name the right steps: procedural questions, vague answers."""
    return [(question, ["Follow the recipe from where you are."]) for question, _ in good_pairs(text, kind)]
