"""The whole pipeline on the bundled sample's sources: curation, three levels, audits, files, reports."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

from build_helpers import read_jsonl
from sqlalchemy import func, select

from expvid.construction.audits import chi_square_p
from expvid.platform.db.engine import Database
from expvid.platform.db.migrate import upgrade_to_head
from expvid.platform.db.models import Item as PlatformItem
from expvid.platform.db.models import Segment
from expvid.platform.services.importer import import_candidates, parse_directory
from expvid.schema import count_blanks
from expvid.suites.expvid_suite import EXPVID_TASKS, load_expvid
from expvid.suites.sample import read_truth

KEPT = {"61842", "62517", "63090", "64455", "65321", "66708"}


def test_curation_keeps_the_six_good_experiments_and_says_why_the_others_went(sample_build, sample_dir):
    truth = read_truth(sample_dir)["experiments"]
    report = sample_build.report
    assert set(report["curation"]["kept"]) == KEPT == {v for v, e in truth.items() if e["curation"] == "keep"}
    rejected = report["curation"]["rejected"]
    assert set(rejected) == {"67001", "67002"}
    assert any("duration 38.7 s outside" in r for r in rejected["67001"])  # truth: "video too short"
    assert any(r.startswith("continuity score 2") for r in rejected["67002"])  # truth: "transcript gap"
    curation = json.loads((sample_build.out / "curation_report.json").read_text())
    gap = next(e for e in curation["entries"] if e["video_id"] == "67002")
    assert gap["measured"]["longest_gap_s"] > 30  # the unnarrated stage, measured independently
    assert "rejected: continuity score 2" in (sample_build.out / "curation_report.md").read_text()


def test_output_loads_in_the_evaluator_with_zero_problems_and_every_task_has_items(sample_build):
    dataset = load_expvid(sample_build.out, strict=True)
    counts = Counter(item.task for item in dataset.items)
    assert set(counts) == {spec.name for spec in EXPVID_TASKS}
    assert counts == Counter({t: e["kept"] for t, e in sample_build.report["items"].items() if e["kept"]})
    assert {item.meta["video_id"] for item in dataset.items} == KEPT
    # Level 2: one segment per sample stage, so the counts follow from the truth (3 stages x 6 experiments).
    assert counts["sequence_ordering"] == counts["sequence_generation"] == 18
    assert counts["video_verification"] == 18 and counts["step_prediction"] == 18
    for item in dataset.items:
        if item.task in ("experimental_conclusion", "scientific_discovery"):
            assert count_blanks(item.question) == len(item.answer) >= 1
            assert item.question.startswith("Title: ") and "\nQuestion: " in item.question


def test_the_platform_importer_accepts_every_record_and_sidecar(sample_build):
    items, segments, experiments, report = parse_directory(sample_build.out)
    assert report.problems == [] and report.warnings == []
    assert len(items) == sample_build.report["total_items"]
    assert len(segments) == 18 and set(experiments) == KEPT
    for parsed in items:
        source = parsed.provenance["source"]
        assert (sample_build.out / source["video"]).is_file()
        assert parsed.provenance["drafts"] and all("raw_response" in d for d in parsed.provenance["drafts"])
        if parsed.task.startswith(("sequence", "video", "step")):
            assert parsed.segment_key is not None and parsed.segment_key in segments


def test_a_real_import_carries_the_audit_flags_into_the_platform(sample_build, tmp_path):
    url = f"sqlite:///{tmp_path / 'platform.db'}"
    upgrade_to_head(url)
    database = Database(url)
    report = import_candidates(database, sample_build.out, assign=False)
    assert report.total_imported == sample_build.report["total_items"] and report.problems == []
    with database.read() as db:
        rows = db.execute(select(PlatformItem.key, PlatformItem.flags, PlatformItem.source_video)).all()
        segments = db.scalar(select(func.count()).select_from(Segment))
    flagged = {key for key, flags, _ in rows if flags}
    assert len(flagged) == sample_build.report["flagged_items"] > 0
    assert all(video is not None and video.startswith("sources/") for _, _, video in rows)
    assert segments == 18


def test_clip_names_reveal_nothing_and_every_referenced_file_exists(sample_build):
    out = sample_build.out
    paths = set()
    for spec in EXPVID_TASKS:
        for record in read_jsonl(out / spec.path):
            paths.add(record["video_path"])
            assert (out / record["video_path"]).is_file()
    for path in paths:
        name = Path(path).name
        assert re.fullmatch(r"clip_[0-9a-f]{16}\.mp4|\d+\.mp4", name), path
        assert "removed" not in path and "prediction" not in path and "verification" not in path
    on_disk = {p.relative_to(out).as_posix() for p in (out / "videos").rglob("*.mp4")}
    experiments = read_jsonl(out / "experiments.jsonl")
    segments = read_jsonl(out / "segments.jsonl")
    assert on_disk == paths | {e["full_video"] for e in experiments} | {s["clip"] for s in segments}


def test_each_answer_letter_is_drawn_from_the_item_itself_and_spread_over_the_four(sample_build):
    keys = {line["uid"]: line["draft_key"] for line in read_jsonl(sample_build.out / "provenance.jsonl")}
    pooled: Counter[str] = Counter()
    for task in ("tools", "materials", "quantity", "operation", "sequence_ordering"):
        level = 1 if task != "sequence_ordering" else 2
        for record in read_jsonl(sample_build.out / f"annotations/level{level}/{task}.jsonl"):
            # docs/build.md: the position is sha256("<seed>|<experiment>|<draft key>|letters") mod 4.
            key = keys[task + "/" + record["id"]]
            digest = hashlib.sha256(f"0|{record['video_id']}|{key}|letters".encode()).hexdigest()
            assert record["answer"] == "ABCD"[int(digest[:8], 16) % 4], (task, record["id"])
            pooled[record["answer"]] += 1
        assert set(sample_build.report["balance"][task]["answer_letters"]) == set("ABCD")
    # Drawn per item, the letters are uniform: all four-option items together pass a chi-square test.
    assert chi_square_p([pooled[letter] for letter in "ABCD"]) > 0.01, pooled
    # Completeness verification cannot be balanced: the removed step is never the last one.
    verification = read_jsonl(sample_build.out / "annotations/level2/video_verification.jsonl")
    assert all(r["answer"] != list(r["options"])[-1] for r in verification)
    assert sample_build.report["balance"]["video_verification"]["last_option_share"] == 0.0


def test_level2_records_follow_the_segment_step_lists(sample_build, sample_dir):
    out = sample_build.out
    truth = read_truth(sample_dir)["experiments"]
    segments = {s["segment_id"]: s for s in read_jsonl(out / "segments.jsonl")}
    provenance = {p["item"]: p for p in read_jsonl(out / "provenance.jsonl")}
    for segment in segments.values():
        stage_steps = [s["steps"] for s in truth[segment["video_id"]]["stages"]]
        assert [s["number"] for s in segment["steps"]] in stage_steps  # one segment = one true stage
        full = segment["full_step_list"]
        assert full == [s["text"] for s in truth[segment["video_id"]]["steps"]]
    for record in read_jsonl(out / "annotations/level2/sequence_generation.jsonl"):
        segment = segments[provenance[f"sequence_generation/{record['id']}"]["segment_id"]]
        assert record["answer"] == [str(s["number"]) for s in segment["steps"]]
        assert record["question"].endswith(
            "\n".join(f"{i}. {t}" for i, t in enumerate(segment["full_step_list"], 1))
        )
    for record in read_jsonl(out / "annotations/level2/step_prediction.jsonl"):
        segment = segments[provenance[f"step_prediction/{record['id']}"]["segment_id"]]
        assert record["answer"] == segment["steps"][-1]["number"] and len(segment["steps"]) >= 4
    for record in read_jsonl(out / "annotations/level2/sequence_ordering.jsonl"):
        segment = segments[provenance[f"sequence_ordering/{record['id']}"]["segment_id"]]
        texts = [s["text"] for s in segment["steps"]]
        correct = "\n".join(f"{i}. {t}" for i, t in enumerate(texts, 1))
        assert record["options"][record["answer"]] == correct
        for letter, option in record["options"].items():
            lines = [re.sub(r"^\d+\. ", "", line) for line in option.splitlines()]
            assert sorted(lines) == sorted(texts)  # every option: the same steps, reordered
            assert letter == record["answer"] or lines != texts


def test_every_item_keeps_its_provenance(sample_build):
    provenance = read_jsonl(sample_build.out / "provenance.jsonl")
    assert len(provenance) == sample_build.report["total_items"]
    prompts = Counter(d["prompt_id"] for p in provenance for d in p["drafts"])
    for prompt_id in ("g1_2_material_mcq", "g1_4_tool_mcq", "g1_5_quantity_mcq", "g1_7_operation_mcq",
                      "g2_1_clip_segmentation", "g2_2_step_extraction", "g2_3_sequence_ordering_mcq",
                      "findings_summary", "level3_blanks"):  # fmt: skip
        assert prompts[prompt_id] > 0, prompt_id
    for line in provenance:
        for draft in line["drafts"]:
            assert draft["model"] == "openai:deepseek-r1"
            assert len(draft["prompt_sha256"]) == 64 and len(draft["request_sha256"]) == 64
            json.loads(draft["raw_response"]) if draft["raw_response"].startswith(("{", "[")) else None


def test_blind_audit_flags_what_a_text_only_model_gets_right(sample_build):
    """The scripted blind model always picks the longest option: exactly the items whose correct
    option is the longest get flagged, and none of the others."""
    flags = {
        p["item"]: {f["kind"] for f in p["flags"]} for p in read_jsonl(sample_build.out / "provenance.jsonl")
    }
    checked = 0
    for task in ("tools", "materials", "operation"):
        for record in read_jsonl(sample_build.out / f"annotations/level1/{task}.jsonl"):
            options = record["options"]
            longest = max(options, key=lambda letter: len(options[letter]))
            unique = sum(len(t) == len(options[longest]) for t in options.values()) == 1
            if unique:
                checked += 1
                assert ("blind_answerable" in flags[f"{task}/{record['id']}"]) == (
                    longest == record["answer"]
                )
    assert checked > 100
    assert sample_build.report["flags"]["tools"]["blind_answerable"] > 0


def test_build_report_counts_calls_tokens_and_cost(sample_build):
    report = sample_build.report
    calls = report["calls"]
    assert calls["sent"] + calls["cache_hits"] >= sample_build.requests
    assert calls["sent"] == sample_build.requests  # every request the server saw is counted once
    assert calls["failures"] == 0 and report["problems"] == []
    stage = calls["by_stage"]["llm:g2_1_clip_segmentation"]
    assert stage["requests"] == 6  # one segmentation per kept experiment
    tokens = report["tokens"]
    expected = (tokens["prompt"] * 0.55 + tokens["completion"] * 2.19) / 1e6
    assert report["cost"]["this_run"] == round(expected, 6) > 0
    markdown = (sample_build.out / "build_report.md").read_text()
    assert "## Curation" in markdown and "rejected 67002" in markdown and "| tools |" in markdown
