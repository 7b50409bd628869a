"""`expvid build --recipe promqa` on the sample sources against a scripted generator on loopback."""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from pathlib import Path

import av
import pytest
from promqa_build_helpers import read_json, read_jsonl, run
from promqa_lab import PromqaLab, good_pairs
from reply_styles import ReplyStyle

from expvid.construction.recipes.promqa import candidates as files
from expvid.fakes.models.server import LoopbackServer
from expvid.media.synth import read_frame_code
from expvid.suites.promqa import load_promqa
from expvid.suites.promqa.sample_sources import FPS


@pytest.fixture(scope="module")
def built(
    sample_sources: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict, PromqaLab, int]:
    lab = PromqaLab(malformed_first={"gen-a"})
    out = tmp_path_factory.mktemp("promqa_build") / "cand"
    with LoopbackServer(lab) as server:
        report = run(sample_sources, out, server)
        sent = len(server.requests)
    return out, report, lab, sent


def frame_codes(path: Path) -> list[int]:
    with av.open(str(path)) as container:
        return [read_frame_code(f.to_ndarray(format="rgb24")) for f in container.decode(video=0)]


def test_prefix_clips_hold_exactly_the_frames_before_the_action_boundary(built) -> None:
    out, _, _, _ = built
    provenance = read_jsonl(out / files.PROVENANCE_FILE)
    checked = set()
    for entry in provenance:
        if entry["clip"] in checked:
            continue
        checked.add(entry["clip"])
        end = entry["source"]["end"]
        # Frame i is shown from i / FPS: the prefix [0, end) holds frames 0 .. ceil(end * FPS) - 1.
        assert frame_codes(out / entry["clip"]) == list(range(math.ceil(end * FPS)))
        video = out / entry["source"]["video"]
        sha = hashlib.sha256(video.read_bytes()).hexdigest()
        assert entry["source"]["video_sha256"] == sha
        assert entry["clip"] == files.clip_path(files.clip_address(sha, end))
    assert len(checked) >= 10


def test_candidates_are_a_release_that_the_suite_loads(built) -> None:
    out, report, _, _ = built
    records = read_json(out / files.EXAMPLES_FILE)
    dataset = load_promqa(out)
    assert not dataset.problems and len(dataset.items) == len(records) == report["total_items"]
    kinds = Counter(r["type"] for r in records)
    assert set(kinds) == {"next", "missing", "order", "preparation", "measurement", "timing", "technique",
                          "temperature"}  # fmt: skip
    for record in records:
        generation = record["generation"]
        assert generation["template_type"] == "step-target" and generation["model_id"] == "gen-a"
        assert record["question"] == generation["qas"][0]["question"]
        assert record["answers"] == generation["qas"][0]["answers"] and record["answer_tags"] == [
            "machine"
        ] * len(record["answers"])
        assert len(generation["qas"]) == 3
    graphs = read_json(out / files.GRAPHS_FILE)
    assert {g["name"] for g in graphs.values()} == {"Spiced Cocoa", "Cucumber Yogurt Bowl"}


def test_identity_and_provenance_come_from_content(built) -> None:
    out, _, _, _ = built
    records = {r["question_id"]: r for r in read_json(out / files.EXAMPLES_FILE)}
    for entry in read_jsonl(out / files.PROVENANCE_FILE):
        record = records[entry["question_id"]]
        assert entry["uid"] == entry["item"] == f"{record['type']}/{record['question_id']}"
        assert entry["experiment_id"] == record["recording_id"]
        assert entry["question_id"] == f"{record['example_id']}_{record['type']}"
        assert entry["content_sha256"] == files.content_sha256(
            record["question"], record["answers"], Path(entry["clip"]).stem
        )
        assert entry["drafts"][0]["attempts"] == 2  # the first reply had no pair and was re-asked
        # The release's end_time is the clip's end truncated to the second: never past the clip.
        whole = int(entry["source"]["end"])
        assert record["end_time"] == f"00:{whole // 60:02}:{whole % 60:02}"


def test_a_rerun_asks_nothing_and_writes_the_same_items(built, sample_sources: Path) -> None:
    out, report, _, sent = built
    assert report["calls"]["invalid_replies"] == report["total_items"]
    assert sent == 2 * report["total_items"]
    before = (out / files.EXAMPLES_FILE).read_bytes()
    with LoopbackServer(PromqaLab(malformed_first={"gen-a"})) as server:
        again = run(sample_sources, out, server)
        assert len(server.requests) == 0
    assert again["calls"]["sent"] == 0 and again["calls"]["cache_hits"] == 2 * report["total_items"]
    assert again["clips"]["clips"] == 0 and again["clips"]["reused"] == report["clips"]["clips"]
    assert (out / files.EXAMPLES_FILE).read_bytes() == before


def test_costs_are_counted_and_priced(built) -> None:
    _, report, _, _ = built
    tokens = report["tokens"]
    assert tokens["prompt"] > 0 and tokens["completion"] > 0
    expected = (tokens["prompt"] * 2.5 + tokens["completion"] * 10.0) / 1e6
    assert report["cost"]["this_run"] == pytest.approx(expected, abs=1e-6)
    assert report["generation"]["seconds"] > 0


def test_failed_units_are_reported_and_only_they_are_asked_again(
    sample_sources: Path, tmp_path: Path
) -> None:
    out = tmp_path / "cand"
    with LoopbackServer(PromqaLab(malformed_always={"timing"})) as server:
        first = run(sample_sources, out, server)
    failed = {u["unit"] for u in first["failed_units"]}
    assert failed and all(unit.endswith("_timing") for unit in failed)
    assert first["calls"]["failures"] == len(failed) and first["total_items"] > 0
    assert not any(r["type"] == "timing" for r in read_json(out / files.EXAMPLES_FILE))
    with LoopbackServer(PromqaLab()) as server:
        second = run(sample_sources, out, server)
        asked = {r.texts[0] for r in server.requests}
    # Exactly the failed units were asked again (one request each), in a new cache round.
    assert len(asked) == len(server.requests) == len(failed)
    assert all("about timing mistake(s)" in text for text in asked)
    assert second["failed_units"] == [] and second["total_items"] == first["total_items"] + len(failed)


#: A reply as a model that ignores the requested format writes it: a preamble, CRLF, a fenced block,
#: numbered questions with a tag, tab-indented dash answers in quotes, a closing remark.
MESSY = ReplyStyle(
    newline="\r\n", question_marker="{n}. [question] ", answer_marker="- ", indent="\t",
    question_quote=("**", "**"), answer_quote=("\u201c", "\u201d"), bold_question=False,
    blank_between=True, preamble="Here are three pairs:", closing="Let me know if you need more.",
    fence="```markdown",
)  # fmt: skip


def test_replies_in_other_formats_are_read_without_markup_by_default(
    sample_sources: Path, tmp_path: Path
) -> None:
    with LoopbackServer(PromqaLab(style=MESSY)) as server:
        report = run(sample_sources, tmp_path / "tolerant", server, next=4, missing=4, others=2)
    assert report["settings"]["parser"] == "tolerant" and report["failed_units"] == []
    assert report["calls"]["invalid_replies"] == 0 and report["total_items"] > 0
    for record in read_json(tmp_path / "tolerant" / files.EXAMPLES_FILE):
        kind = record["type"]
        wanted = {(q, tuple(a)) for q, a in good_pairs(record["generation"]["prompt"], kind)}
        got = {(qa["question"], tuple(qa["answers"])) for qa in record["generation"]["qas"]}
        assert got == wanted, record["question_id"]  # no \r, tag, bold, quote or bullet copied
    # The official expression reads no pair from the same replies: every unit is re-asked, then fails.
    with LoopbackServer(PromqaLab(style=MESSY)) as server:
        official = run(sample_sources, tmp_path / "official", server, next=4, missing=4, others=2,
                       parser="official")  # fmt: skip
    assert official["total_items"] == 0 and len(official["failed_units"]) == report["total_items"]
