"""Rewriting a real ProMQA reply the ways generators really format lists (a hypothesis strategy).

A style picks line ends, the question and answer markers (bullets, numbers, tags, bold tags, or a
plain question line), the answers' indent (spaces, a tab, none), quotes around the text, bold
questions, blank lines between pairs, a preamble, a closing remark and a fenced block. Every style
drawn keeps the pairs recoverable by a careful reader: a flat list (answers not indented) only
where tags, two bullet kinds or question marks tell questions from answers.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

QUESTION_MARKERS = ("* ", "- ", "+ ", "• ", "{n}. ", "{n}) ", "Q{n}: ", "**Question {n}:** ", "[question] ",
                    "Question: ", "")  # fmt: skip
ANSWER_MARKERS = ("* ", "- ", "+ ", "{n}.{m}. ", "A: ", "[answer] ", "Answer: ", "- Answer {m}: ")
INDENTS = ("", "  ", "   ", "    ", "\t", "      ")
QUOTES = (("", ""), ('"', '"'), ("“", "”"), ("'", "'"), ("`", "`"))
PREAMBLES = (
    "",
    "Here are three question-answer pairs:",
    "Sure! Based on the situation, the person might ask:",
)
CLOSINGS = ("", "I hope these help!", "Note: the answers assume the recipe graph above.")
FENCES = ("", "```", "```markdown")


@dataclass(frozen=True)
class ReplyStyle:
    newline: str
    question_marker: str
    answer_marker: str
    indent: str
    question_quote: tuple[str, str]
    answer_quote: tuple[str, str]
    bold_question: bool
    blank_between: bool
    preamble: str
    closing: str
    fence: str

    @property
    def tagged(self) -> bool:
        """Questions or answers carry a tag (or a sub-number) that names their role."""
        question = any(tag in self.question_marker for tag in ("Q", "[question]"))
        answer = any(tag in self.answer_marker for tag in ("A:", "[answer]", "Answer", "{m}."))
        return question or answer

    def readable(self, pairs: list[tuple[str, list[str]]]) -> bool:
        """Whether a careful reader can tell questions from answers in this style."""
        texts = [q for q, _ in pairs] + [a for _, answers in pairs for a in answers]
        for left, right in (self.question_quote, self.answer_quote):
            if left and any(left in t or right in t for t in texts):
                return False
        if self.question_marker == "":
            return bool(self.indent) and all(q.endswith("?") for q, _ in pairs)
        if self.indent or self.tagged:
            return True
        same_kind = self.question_marker[0] == self.answer_marker[0] or (
            self.question_marker.startswith("{n}") and self.answer_marker.startswith("{n}")
        )
        if not same_kind:
            return True
        return all(q.endswith("?") for q, _ in pairs) and not any(
            a.endswith("?") for _, answers in pairs for a in answers
        )

    def render(self, pairs: list[tuple[str, list[str]]]) -> str:
        lines: list[str] = []
        if self.preamble:
            lines += [self.preamble, ""]
        if self.fence:
            lines.append(self.fence)
        for n, (question, answers) in enumerate(pairs, start=1):
            text = f"{self.question_quote[0]}{question}{self.question_quote[1]}"
            if self.bold_question:
                text = f"**{text}**"
            lines.append(self.question_marker.format(n=n) + text)
            for m, answer in enumerate(answers, start=1):
                marker = self.answer_marker.format(n=n, m=m)
                lines.append(f"{self.indent}{marker}{self.answer_quote[0]}{answer}{self.answer_quote[1]}")
            if self.blank_between:
                lines.append("")
        if self.fence:
            lines.append("```")
        if self.closing:
            lines += ["", self.closing]
        return self.newline.join(lines)


STYLES = st.builds(
    ReplyStyle,
    newline=st.sampled_from(("\n", "\r\n")),
    question_marker=st.sampled_from(QUESTION_MARKERS),
    answer_marker=st.sampled_from(ANSWER_MARKERS),
    indent=st.sampled_from(INDENTS),
    question_quote=st.sampled_from(QUOTES),
    answer_quote=st.sampled_from(QUOTES),
    bold_question=st.booleans(),
    blank_between=st.booleans(),
    preamble=st.sampled_from(PREAMBLES),
    closing=st.sampled_from(CLOSINGS),
    fence=st.sampled_from(FENCES),
)


def style_of(index: int) -> ReplyStyle:
    """A fixed, varied style for reformatting number `index` (no hypothesis needed: for counts)."""
    pick = [
        ("\n", "\r\n")[index % 2],
        QUESTION_MARKERS[index % len(QUESTION_MARKERS)],
        ANSWER_MARKERS[(index // 2) % len(ANSWER_MARKERS)],
        INDENTS[(index // 3) % len(INDENTS)],
        QUOTES[(index // 5) % len(QUOTES)],
        QUOTES[(index // 7) % len(QUOTES)],
        bool(index // 11 % 2),
        bool(index // 13 % 2),
        PREAMBLES[index % len(PREAMBLES)],
        CLOSINGS[(index // 4) % len(CLOSINGS)],
        FENCES[(index // 6) % len(FENCES)],
    ]
    return ReplyStyle(*pick)  # type: ignore[arg-type]
