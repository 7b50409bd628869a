"""A scripted "lab model" for the SciVideoBench recipe's roles, served by the loopback OpenAI server.

It reads each request as a model would (which role's prompt, the timed narration lines, the
question and options) and answers in the role's JSON format. What it writes is deliberately
uneven, as real drafting is: per experiment the second hypothetical question is one the evaluator
finds unanswerable (dropped and counted), every quantitative question's key value is spoken but not
shown (the comparer says so: the verifier's overlay tool is for it), the refiner rewrites every
text distractor (so the evaluator is asked again on them), and the blind solver always answers "A"
(so items whose answer is A are flagged as blind-answerable).

Text options are written as a careful drafter writes them: the answer and its nine distractors in
one form and of one length ("It keeps the conceptual condition 1 of the protocol steady" beside
"... cooler", "... warmer"), and the refiner's rewrite keeps that form, so nothing but the content
tells them apart. `SvbLab(templated_distractors=True)` drafts as a careless model does instead:
nine distractors from one template of another form and length than the answer ("It changes the
conceptual reading 1 by a factor of 6"), which the refiner lengthens further; a text-only solver
(the shortest option, the odd one out) then answers every such item, which the validity audit's
release gate must catch.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

from expvid.fakes.models.server import RecordedRequest, Reply

_LINE = re.compile(r"^(\d\d:\d\d)-(\d\d:\d\d): (.+)$", re.MULTILINE)
_OPTION = re.compile(r"^([A-J])\. (.+)$", re.MULTILINE)
UNANSWERABLE = "without any calibration"
#: The answer's last word and its distractors' (one length: no option stands out by its length).
ANSWER_WORD = "steady"
DISTRACTOR_WORDS = ("cooler", "warmer", "softer", "darker", "harder", "weaker", "slower", "denser", "looser")
#: The refiner's rewrite of each distractor word (the same length: the rewrite keeps the form).
REFINED_WORDS = dict(
    zip(
        DISTRACTOR_WORDS,
        ("colder", "hotter", "milder", "dimmer", "firmer", "lesser", "duller", "richer", "sparer"),
        strict=True,
    )
)


def _spans(text: str) -> list[tuple[str, str, str]]:
    return _LINE.findall(text)


class SvbLab:
    def __init__(self, *, templated_distractors: bool = False) -> None:
        self.templated = templated_distractors
        self.answers: dict[str, str] = {}  # question text -> correct answer text
        self.kinds: dict[str, int] = {}
        self._lock = threading.Lock()

    def _count(self, kind: str) -> None:
        with self._lock:
            self.kinds[kind] = self.kinds.get(kind, 0) + 1

    def __call__(self, request: RecordedRequest) -> Reply:
        text = "\n".join(request.texts)
        reply = self._reply(text)
        # usage as a server would count it, roughly: 4 characters a token, 500 tokens a 448-pixel frame
        return Reply.ok(
            reply,
            prompt_tokens=len(text) // 4 + 500 * len(request.images),
            completion_tokens=len(reply) // 4 + 1,
        )

    def _reply(self, text: str) -> str:
        if "Answer with the option's letter" in text:
            self._count("blind")
            return "A"
        if "Analyse the experiment below" in text:
            self._count("analysis")
            title = re.search(r"Title: (.+)", text)
            return json.dumps(
                {
                    "core_question": f"How does {title.group(1) if title else 'it'} work?",
                    "theory": ["mass balance"],
                    "operations": [],
                    "numbers": [],
                }
            )
        if "Write questions about the experiment below" in text:
            self._count("generate")
            return json.dumps(self._generate(text))
        if "Answer the question about the experiment" in text:
            self._count("evaluate")
            return json.dumps(self._evaluate(text))
        if "List every visual cue the rationale needs" in text:
            self._count("compare")
            return json.dumps(self._compare(text))
        if "Rewrite the question" in text:
            self._count("refine")
            return json.dumps(self._refine(text))
        return "I do not understand this request."

    def _generate(self, text: str) -> dict[str, Any]:
        asked = re.search(r"Write questions about the experiment below: (.+)\.", text)
        assert asked is not None
        counts = {
            t: int(n) for n, t in re.findall(r"(\d+) (conceptual|hypothetical|quantitative)", asked.group(1))
        }
        spans = _spans(text.split("Analysis of the experiment:")[1]) or [("00:05", "00:09", "the first step")]
        title = re.search(r'"core_question": "How does (.+?) work\?"', text)
        topic = title.group(1) if title else "the experiment"
        questions = []
        for kind, count in counts.items():
            for k in range(count):
                start, end, said = spans[(k * 3 + len(questions)) % len(spans)]
                evidence = [{"start": start, "end": end, "what": said[:60]}]
                if kind == "quantitative":
                    question = f"Using the value stated while '{said[:50]}' in {topic}, what total mass in grams is used (step {k + 1})?"
                    questions.append(
                        {
                            "type": kind,
                            "question": question,
                            "value": round(2.47 + k, 2),
                            "unit": "g",
                            "decimals": 2,
                            "evidence": evidence,
                        }
                    )
                    self.answers[question] = f"{2.47 + k:.2f} g"
                    continue
                extra = f" {UNANSWERABLE}" if kind == "hypothetical" and k == 1 else ""
                question = f"In {topic}, why is the step where '{said[:50]}' needed{extra} ({kind} {k + 1})?"
                if self.templated:
                    answer = f"It keeps the {kind} condition {k + 1} of the protocol stable"
                    distractors = [
                        f"It changes the {kind} reading {k + 1} by a factor of {d + 2}" for d in range(9)
                    ]
                else:
                    form = f"It keeps the {kind} condition {k + 1} of the protocol"
                    answer = f"{form} {ANSWER_WORD}"
                    distractors = [f"{form} {word}" for word in DISTRACTOR_WORDS]
                questions.append(
                    {
                        "type": kind,
                        "question": question,
                        "answer": answer,
                        "distractors": distractors,
                        "evidence": evidence,
                    }
                )
                self.answers[question] = answer
        return {"questions": questions}

    def _find(self, question: str) -> str | None:
        """The answer of a generated question, also once the refiner put "At mm:ss-mm:ss, " before it."""
        asked = question.casefold()
        for known, answer in self.answers.items():
            if known.casefold() in asked or asked.split(", ", 1)[-1] in known.casefold():
                return answer
        return None

    def _evaluate(self, text: str) -> dict[str, Any]:
        question = re.search(r"^Question: (.+)$", text, re.MULTILINE)
        assert question is not None
        if UNANSWERABLE in question.group(1):
            return {
                "answerable": False,
                "answer": None,
                "rationale": "The video never shows the calibration.",
            }
        answer = self._find(question.group(1))
        options = dict(_OPTION.findall(text.split("Options:")[1]))
        letter = next((letter for letter, option in options.items() if option == answer), None)
        return {
            "answerable": letter is not None,
            "answer": letter,
            "rationale": f"The frames show the step; the answer is {answer}.",
        }

    def _compare(self, text: str) -> dict[str, Any]:
        spans = _spans(text)
        question = re.search(r"^Question about the experiment .+?: (.+)$", text, re.MULTILINE)
        said = re.search(r"'(.+?)'", question.group(1) if question else "")
        start, end = next(
            ((a, b) for a, b, t in spans if said and t.startswith(said.group(1)[:20])),
            (spans[0][0], spans[0][1]) if spans else ("00:01", "00:02"),
        )
        cues = [{"cue": "the operation being performed", "visible": True, "start": start, "end": end}]
        if "total mass in grams" in text:
            cues.append(
                {
                    "cue": "the mass of the reagent",
                    "visible": False,
                    "start": start,
                    "end": end,
                    "spoken": True,
                    "value": "2.50 g",
                }
            )
        return {"cues": cues, "grounded": True}

    def _refine(self, text: str) -> dict[str, Any]:
        question = re.search(r"^Question: (.+)$", text, re.MULTILINE)
        assert question is not None
        cue = re.search(r"at (\d\d:\d\d)-(\d\d:\d\d)", text)
        where = f"At {cue.group(1)}-{cue.group(2)}" if cue else "At 00:01"
        rewritten = f"{where}, {question.group(1)[0].lower()}{question.group(1)[1:]}"
        distractors = [
            line[2:]
            for line in text.split("Current distractors:")[1].split("Visual cues")[0].strip().splitlines()
        ]
        if "Keep the numeric options" in text:
            distractors = []
        elif self.templated:  # sharpened: a hedge the question's context makes wrong
            distractors = [
                d if d.endswith(" in this protocol") else f"{d} in this protocol" for d in distractors
            ]
        else:  # sharpened, in the same form: another word of the same length
            distractors = [
                " ".join([*d.split()[:-1], REFINED_WORDS.get(d.split()[-1], d.split()[-1])])
                for d in distractors
            ]
        return {"question": rewritten, "distractors": distractors}
