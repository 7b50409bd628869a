"""The pieces behind the campaign features, on hand-made inputs: word matching, ordering shortcuts,
transcript windows, the one-pass clip cutter against the per-clip one, and the retry book."""

from __future__ import annotations

import random
from pathlib import Path

import av
import pytest

from expvid.construction.level1 import mentioned, target_check
from expvid.construction.llm import InvalidReply
from expvid.construction.retries import ROUNDS_PER_EPOCH, RetryBook
from expvid.construction.schemas import FourOptionMCQ
from expvid.construction.windows import transcript_windows
from expvid.media.clip_pass import ClipJob, cut_clips
from expvid.media.clips import cut_clip
from expvid.media.transcript_model import Cue
from expvid.media.words import contains_phrase, lemma
from expvid.ordering.rebuild import SOLVERS, kendall, rebuild, shortcuts, solver_accuracy, symmetric


def test_targets_must_be_spoken_as_whole_words_or_inflections_not_prefixes():
    narration = "Add 500 microliters of vitronectin solution into each well containing a coverslip."
    assert not mentioned("P1000 micropipette", narration)  # "micro" starts "microliters": not enough
    assert mentioned("vitronectin solution", narration)
    assert mentioned("coverslips", narration) and mentioned("wells", narration)
    assert not mentioned("glass coverslips", narration)  # "glass" is never said
    assert lemma("pipetted") == lemma("pipettes") == lemma("pipette")
    assert lemma("rinsing") == lemma("rinse") and lemma("stirred") == lemma("stir")
    assert contains_phrase("Title: Vitronectin-Coated Coverslips", "vitronectin")
    assert not contains_phrase("Title: Vitronectin-Coated Coverslips", "cover")


def test_distractors_spoken_in_the_same_clip_are_rejected_as_ambiguous():
    narration = "Using fine-tip forceps, place one coverslip into each well of a 24-well plate."
    check = target_check("fine-tip forceps", "tool", narration)
    ambiguous = FourOptionMCQ(
        question="q", options={"A": "fine-tip forceps", "B": "24-well plate", "C": "cell scraper", "D": "spatula"},
        answer="A",
    )  # fmt: skip
    with pytest.raises(InvalidReply, match=r"24-well plate.*mentioned in this clip's narration"):
        check(ambiguous)
    fine = ambiguous.model_copy(update={"options": {**ambiguous.options, "B": "hemocytometer"}})
    assert check(fine) is fine


@pytest.mark.parametrize("n", range(3, 9))
def test_rebuilt_ordering_distractors_leave_every_option_comparing_solver_at_chance(n):
    correct = tuple(range(n))
    swaps = [tuple(i + 1 if j == i else i if j == i + 1 else j for j in range(n)) for i in range(n - 1)]
    llm = swaps[:3] if n > 3 else [*swaps, (2, 1, 0)]
    assert any("kendall medoid" in s for s in shortcuts(correct, llm))  # one swap each: the medoid
    for seed in range(8):
        rebuilt = rebuild(correct, llm, random.Random(seed))
        assert rebuilt is not None and len(set(rebuilt)) == 3 and correct not in rebuilt
        assert symmetric(correct, rebuilt) and shortcuts(correct, rebuilt) == []
        # Every solver ties on all four options: exactly chance, whatever it breaks ties with.
        assert set(solver_accuracy(correct, rebuilt).values()) == {0.25}
        assert rebuilt[0] in llm  # the model's own single-swap confusion is kept
        assert max(kendall(correct, d) for d in rebuilt) == (3 if n == 3 else 2)


def test_the_solver_battery_catches_the_path_of_swaps_that_farthest_option_answered():
    # Issue 18: C -> D1 -> D2 -> D3 by adjacent swaps; "farthest from the others" got 50%, and no
    # medoid or Borda test noticed.
    correct = (0, 1, 2, 3, 4)
    path = [(1, 0, 2, 3, 4), (1, 2, 0, 3, 4), (1, 2, 3, 0, 4)]
    accuracy = solver_accuracy(correct, path)
    assert accuracy["kendall medoid"] == 0.0 and accuracy["borda (mean position) order"] <= 0.25
    assert accuracy["kendall farthest"] == 0.5
    assert accuracy["shared neighbouring pairs"] == 1.0
    assert len(SOLVERS) >= 30 and any("farthest" in s for s in shortcuts(correct, path))


def test_windows_fit_the_budget_are_balanced_and_end_in_the_longest_pause():
    cues, t = [], 0.0
    for i in range(60):
        pause = 4.0 if i == 31 else 0.5
        cues.append(Cue(start=t, end=t + 3.0, text=f"step {i} of the protocol is narrated here"))
        t += 3.0 + pause
    windows = transcript_windows(cues, 2400)
    assert [c for w in windows for c in w] == cues and len(windows) == 2
    assert len(windows[0]) == 32  # the 4 s pause after cue 31, near the middle
    assert transcript_windows(cues, 10**6) == [cues]


def test_one_decode_pass_writes_the_same_clips_as_cutting_them_one_by_one(sample_sources, tmp_path):
    source = sample_sources / "61842" / "video.mp4"
    spans = [(2.0, 9.5, ()), (9.5, 20.0, ()), (30.0, 70.0, ()), (30.0, 70.0, ((40.0, 48.3),)),
             (30.0, 61.2, ()), (100.0, 110.0, ())]  # fmt: skip
    singles = [
        cut_clip(source, tmp_path / f"one_{i}.mp4", start=a, end=b, remove=r, preset="ultrafast", threads=1)
        for i, (a, b, r) in enumerate(spans)
    ]
    jobs = [ClipJob(str(tmp_path / f"pass_{i}.mp4"), a, b, r) for i, (a, b, r) in enumerate(spans)]
    together, stats = cut_clips(source, jobs, preset="ultrafast", seek_gap=10.0)

    def frames(path: Path) -> list[tuple[int, bytes]]:
        with av.open(str(path)) as container:
            return [
                (f.pts, f.to_ndarray(format="gray")[::16, ::16].tobytes()) for f in container.decode(video=0)
            ]

    for one, both in zip(singles, together, strict=True):
        assert (one.frames, one.first_time, one.last_time, one.removed_frames) == (
            both.frames, both.first_time, both.last_time, both.removed_frames,
        )  # fmt: skip
        assert one.duration == pytest.approx(both.duration)
        assert frames(one.path) == frames(both.path)
    with av.open(str(source)) as container:
        total = container.streams.video[0].frames or sum(1 for _ in container.demux(video=0))
    # The per-clip way decodes the 30-70 s stage three times; one pass decodes no frame twice and
    # seeks over the unused 70-100 s stretch.
    assert stats.seeks >= 1 and stats.decoded_frames < total
    assert not list(tmp_path.glob(".*.partial"))


def test_the_retry_book_asks_failed_units_in_a_new_round_and_survives_a_restart(tmp_path):
    book = RetryBook(tmp_path)
    assert book.round_for("level1", "abc") == 0
    book.record_failure("level1", "abc", 0)
    again = RetryBook(tmp_path)  # the next run
    assert again.round_for("level1", "abc") == 1 and again.round_for("level1", "other") == 0
    assert RetryBook(tmp_path, retry_failed=False).round_for("level1", "abc") == 0  # replay, pay nothing
    again.record_failure("level1", "abc", 1)
    (tmp_path / "failed_calls.jsonl").open("a").write('{"key": "cut sho')  # a line cut by a crash
    later = RetryBook(tmp_path)
    assert later.round_for("level1", "abc") == 2
    later.redo(["level1"])
    assert RetryBook(tmp_path).round_for("level1", "abc") == ROUNDS_PER_EPOCH  # a new epoch starts over
    with pytest.raises(ValueError, match="unknown stage"):
        later.redo(["level9"])
