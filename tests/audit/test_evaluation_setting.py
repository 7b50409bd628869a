"""Solvers that read what the evaluated model is not given flag nothing in that setting.

ExpVid's items carry their clip's narration (`asr_caption`), and the Level-1 answers are drawn from
it, so word overlap with the narration names the answer; but the paper's setting (and expvid's
default) never shows the narration to the model. Whether it does is read from the suite: its prompt
under the given settings contains the transcript, or not (`expvid.audit.setting`)."""

from __future__ import annotations

import random
from pathlib import Path

from expvid.audit import AuditOptions, audit_items, audit_release
from expvid.audit.setting import transcript_shown
from expvid.models.types import Message, TextPart
from expvid.schema import AnswerType, Item

TOOLS = [
    "pipette",
    "beaker",
    "spatula",
    "funnel",
    "tweezers",
    "scalpel",
    "cuvette",
    "syringe",
    "burette",
    "clamp",
]


def _narrated(count: int, seed: int = 5) -> list[Item]:
    """Items whose options are clean (drawn from one pool, letters uniform) but whose narration
    names the correct option, as a Level-1 item's does."""
    rng = random.Random(seed)
    items = []
    for i in range(count):
        options = rng.sample(TOOLS, 4)
        correct = rng.randrange(4)
        items.append(
            Item(
                id=f"tools/{i}", suite="s", task="tools", question="Which tool is used in this step?",
                options=dict(zip("ABCD", options, strict=True)), answer="ABCD"[correct],
                answer_type=AnswerType.CHOICE, context=f"Now take the {options[correct]} and use it carefully.",
            )
        )  # fmt: skip
    return items


def test_transcript_solvers_count_only_where_the_model_is_shown_the_transcript() -> None:
    items = _narrated(120)
    hidden = audit_items(items, options=AuditOptions(embeddings=False, transcript_shown=False))
    by_name = {s.name: s for s in hidden.solvers}
    overlap, with_transcript = by_name["transcript overlap"], by_name["learned text-only model + transcript"]
    for solver in (overlap, with_transcript):
        assert solver.family == "transcript" and solver.accuracy > 0.9
        assert solver.beats_chance and not solver.flagged and "does not show" in (solver.informational or "")
    assert not hidden.flagged_solvers and not hidden.flagged_items
    assert {s.name for s in hidden.informational_solvers} == {overlap.name, with_transcript.name}
    # the learned model without the transcript reads only the options: at chance on clean options
    plain = by_name["learned text-only model"]
    assert plain.family == "learned" and not plain.beats_chance and plain.accuracy < 0.4

    shown = audit_items(items, options=AuditOptions(embeddings=False, transcript_shown=True))
    flagged = {s.name for s in shown.flagged_solvers}
    assert {"transcript overlap", "learned text-only model + transcript"} <= flagged
    assert "learned text-only model" not in flagged
    assert len(shown.flagged_items) >= 0.9 * len(items)
    assert all(s.informational is None for s in shown.solvers)


def test_expvid_sample_the_setting_is_read_from_the_suites_prompt(sample_dir: Path) -> None:
    """The bundled sample: narration overlap answers 89-100% of the Level-1 items; the default
    setting does not show the narration (informational), `-S with_asr=true` does (flagged)."""
    default = audit_release(sample_dir, suite="expvid", options=AuditOptions(embeddings=False))
    assert default.settings["transcript_shown"] is False
    assert "do not contain it" in default.settings["transcript_decided"]
    informational = {(s.name, s.task) for s in default.informational_solvers}
    assert {
        ("transcript overlap", t) for t in ("tools", "materials", "quantity", "operation")
    } <= informational
    assert not default.flagged_solvers, [(s.name, s.task) for s in default.flagged_solvers]

    ablation = audit_release(
        sample_dir, suite="expvid", settings={"with_asr": True}, options=AuditOptions(embeddings=False)
    )
    assert ablation.settings["transcript_shown"] is True
    flagged = {(s.name, s.task) for s in ablation.flagged_solvers}
    assert {("transcript overlap", t) for t in ("tools", "materials", "quantity", "operation")} <= flagged


class _Suite:
    def __init__(self, shows: bool | None = None) -> None:
        self.shows = shows

    def messages(self, item: Item, images: list[object]) -> list[Message]:
        return [Message(role="user", content=[TextPart(text=f"Question: {item.question}")])]


class _Declaring(_Suite):
    def shows_transcript(self) -> bool:  # e.g. a suite whose model hears the video's sound
        return True


class _NeedsFrames(_Suite):
    def messages(self, item: Item, images: list[object]) -> list[Message]:
        raise ValueError("frames needed")


def test_a_suite_declares_it_or_its_prompts_say_it_and_a_doubt_counts() -> None:
    items = _narrated(3)
    assert transcript_shown(_Suite(), items)[0] is False
    shown, how = transcript_shown(_Declaring(), items)
    assert shown is True and "declared by the suite" in how
    assert transcript_shown(_NeedsFrames(), items)[0] is None  # undecided: the family counts
    assert transcript_shown(_Suite(), [i.model_copy(update={"context": None}) for i in items])[0] is None


def test_tiny_si_values_are_told_apart() -> None:
    """Values in nanometres are 1e-10 m in base units: neither the tie rule nor equal value may use
    an absolute slack (the audit once tied every option of such an item and called 0.1001 nm and
    0.1003 nm the same answer)."""
    values = ["0.0844 nm", "0.0768 nm", "0.0751 nm", "0.0716 nm", "0.1001 nm", "0.1003 nm"]
    items = [
        Item(
            id=f"q/{i}", suite="s", task="q", question="What spacing is measured?", answer_type=AnswerType.CHOICE,
            options=dict(zip("ABCDEF", values, strict=True)), answer="ABCDEF"[i % 6],
        )
        for i in range(12)
    ]  # fmt: skip
    report = audit_items(items, options=AuditOptions(embeddings=False, learned=False))
    tested = {s.name: s for s in report.solvers}
    for name in ("nearest the mean", "smallest value", "largest value", "middle rank"):
        assert tested[name].n == len(items), name
    assert not any("near-duplicate options" in entry.flags for entry in report.items)


def test_quotes_of_any_script_do_not_make_two_options_different() -> None:
    twin = Item(
        id="q/0", suite="s", task="q", question="Why?", answer="A", answer_type=AnswerType.CHOICE,
        options={"A": "It keeps the pH stable", "B": "“It keeps the pH stable”", "C": "«It lowers the pH»",
                 "D": "It lowers the pH"},
    )  # fmt: skip
    report = audit_items([twin], options=AuditOptions(embeddings=False, learned=False))
    reason = report.item("q/0").reasons["near-duplicate options"]
    assert 'options A "It keeps the pH stable" and B' in reason and "options C" in reason
