"""The SciVideoBench recipe end to end on narrated sample videos without transcripts:
speech-to-text -> QA generator -> evaluator -> visual comparer -> refiner -> audits -> release."""

from __future__ import annotations

import json
import re

from svb_helpers import SvbBuild, build_args
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.suites.scivideobench import load_scivideobench

runner = CliRunner()


def _jsonl(path):  # type: ignore[no-untyped-def]
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_build_transcribes_drafts_verifies_and_writes_the_release(svb_build: SvbBuild) -> None:
    report, out = svb_build.report, svb_build.out
    # speech-to-text: both videos transcribed through the OpenAI protocol, once each, priced per minute
    assert svb_build.transcribed_by_build == 2
    assert report["speech"]["transcribed"] == 2 and report["speech"]["minutes"] > 4
    assert report["speech"]["cost_this_run"] > 0
    assert sorted(report["experiments"]["transcribed"]) == sorted(p.name for p in svb_build.sources.iterdir())
    # per experiment: 4 asked for, the unanswerable hypothetical one dropped and counted
    assert report["items"]["hypothetical"] == {"kept": 2, "dropped": {"evaluator: unanswerable": 2}}
    assert report["items"]["conceptual"]["kept"] == 2 and report["items"]["quantitative"]["kept"] == 2
    assert report["total_items"] == 6 and not report["failed_units"]
    # the QA generator saw the video as the paper's does: the 4 frames the evaluator sees, labelled
    generator = [
        r for r in svb_build.llm.requests if any("Analyse the experiment below" in t for t in r.texts)
    ]
    assert len(generator) == 2 and all(len(r.images) == 4 for r in generator)
    assert all(sum(t.startswith("[0") for t in r.texts) == 4 for r in generator)
    # every role is its own counted stage; nothing unpriced
    stages = set(report["calls"]["by_stage"])
    assert {"llm:svb_analysis", "llm:svb_generate", "llm:svb_evaluate", "llm:svb_compare", "llm:svb_refine",
            "blind:scivideobench_official_prompt"} <= stages  # fmt: skip
    assert report["per_item"]["calls"] > 0 and report["per_item"]["cost_this_run"] > 0
    # the published layout, read by the suite's own loader
    dataset = load_scivideobench(out)
    assert len(dataset.items) == 6 and not dataset.problems
    rows = _jsonl(out / "scivideobench_1k.jsonl")
    for row in rows:
        assert list(row)[:8] == ["video_id", "question_id", "question", "options", "answer", "question_type",
                                 "video_duration", "discipline"]  # fmt: skip
        assert list(row["options"]) == list("ABCDEFGHIJ")
        assert re.search(r"\b\d\d:\d\d-\d\d:\d\d\b", row["question"]), row[
            "question"
        ]  # refined: visual segments
        assert (out / "videos" / f"jove_{row['video_id']}.mp4").is_file()
    quantitative = [r for r in rows if r["question_type"] == "Quantitative Reasoning"]
    for row in quantitative:  # answer + Gaussian noise: ten distinct numbers with the answer's unit
        values = [float(text.split()[0]) for text in row["options"].values()]
        assert len(set(values)) == 10 and all(text.endswith(" g") for text in row["options"].values())
    provenance = {line["uid"]: line for line in _jsonl(out / "provenance.jsonl")}
    assert set(provenance) == {item.id for item in dataset.items}  # uid = the id eval gives the item
    for uid, line in provenance.items():
        assert {"experiment_id", "draft_key", "content_sha256", "question_id"} <= set(line)
        roles = ["qa_generator", "qa_generator", "evaluator", "visual_comparer", "refiner"]
        if not uid.endswith("/quantitative"):  # the refiner rewrote the options: the evaluator again
            roles.append("evaluator_after_refiner")
            assert (
                line["evaluator_after_refiner"]["answer"] == line["evaluator_after_refiner"]["correct_letter"]
            )
        assert [d["role"] for d in line["drafts"]] == roles

        assert line["transcript"]["engine"] == "openai" and line["transcript"]["model"] == "whisper-1"
        assert line["evaluator"]["rationale"] and line["visual_cues"][0]["start"]
    assert all(
        provenance[r["video_id"] + "/" + r["question_id"] + "/quantitative"]["overlay_suggestions"]
        for r in quantitative
    )


def test_ids_and_letters_come_from_content_and_a_rerun_pays_nothing(svb_build: SvbBuild, tmp_path) -> None:  # type: ignore[no-untyped-def]
    before = (svb_build.out / "scivideobench_1k.jsonl").read_text(encoding="utf-8")
    sent_llm, sent_stt = len(svb_build.llm.requests), len(svb_build.stt.transcriptions)
    result = runner.invoke(app, svb_build.args)
    assert result.exit_code == 0, result.output
    report = json.loads((svb_build.out / "build_report.json").read_text(encoding="utf-8"))
    assert len(svb_build.llm.requests) == sent_llm and len(svb_build.stt.transcriptions) == sent_stt
    assert report["calls"]["sent"] == 0 and report["speech"]["cache_hits"] == 2
    assert (svb_build.out / "scivideobench_1k.jsonl").read_text(encoding="utf-8") == before
    # one experiment alone: its items keep their ids, letters and texts
    only = tmp_path / "one"
    only.mkdir()
    first = sorted(svb_build.sources.iterdir())[0]
    (only / first.name).symlink_to(first, target_is_directory=True)
    out = tmp_path / "alone"
    result = runner.invoke(app, build_args(only, out, svb_build.llm, svb_build.stt))
    assert result.exit_code == 0, result.output
    alone = _jsonl(out / "scivideobench_1k.jsonl")
    together = [r for r in _jsonl(svb_build.out / "scivideobench_1k.jsonl") if r["video_id"] == first.name]
    assert alone == together


def test_dry_run_counts_roles_minutes_and_cost(speech_sources, tmp_path, svb_build: SvbBuild) -> None:  # type: ignore[no-untyped-def]
    args = build_args(speech_sources, tmp_path / "fresh", svb_build.llm, svb_build.stt)
    result = runner.invoke(app, [*args, "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "| svb_evaluate | 8 |" in result.output and "| blind_audit | 8 |" in result.output
    assert "speech-to-text (openai)" in result.output and "Total: $" in result.output
    assert not (tmp_path / "fresh").exists()


def test_eval_runs_the_built_release_unchanged(svb_build: SvbBuild, tmp_path) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    result = runner.invoke(app, ["eval", "--suite", "scivideobench", "--data", str(svb_build.out), "--model", "random:0",
                                 "--out", str(run), "--frames", "all=2", "--size", "64", "--no-cache", "--quiet"])  # fmt: skip
    assert result.exit_code == 0, result.output
    scores = json.loads((run / "scores.json").read_text(encoding="utf-8"))
    assert sum(task["n"] for task in scores["tasks"].values()) == 6


def test_a_replacement_prompt_that_drops_a_placeholder_stops_before_any_call(
    svb_build: SvbBuild, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "svb_evaluate.user.txt").write_text("Answer {question}\n{options}\n", encoding="utf-8")
    sent = len(svb_build.llm.requests)
    args = build_args(svb_build.sources, tmp_path / "out", svb_build.llm, svb_build.stt)
    result = runner.invoke(app, [*args, "-R", f"prompts={prompts}"])
    assert result.exit_code == 2, result.output
    assert "drops the placeholder(s) {paper}, {title}, {transcript}" in result.output
    assert len(svb_build.llm.requests) == sent


def _sent(out) -> dict[str, int]:  # type: ignore[no-untyped-def]
    report = json.loads((out / "build_report.json").read_text(encoding="utf-8"))
    return {stage: c["requests"] for stage, c in report["calls"]["by_stage"].items() if c["requests"]}


def _dry(args: list[str], *extra: str) -> str:
    result = runner.invoke(app, [*args, "--dry-run", *extra])
    assert result.exit_code == 0, result.output
    return result.output


def test_dry_run_counts_cached_replies_as_free_and_forecasts_a_redo_exactly(
    svb_build: SvbBuild, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(svb_build.out, out)
    args = build_args(svb_build.sources, out, svb_build.llm, svb_build.stt)
    # A finished build: nothing to send, every reply found in the response cache, the audio in the
    # transcript cache.
    finished = _dry(args)
    for stage in ("svb_generate", "svb_evaluate", "svb_compare", "svb_refine", "blind_audit"):
        assert f"| {stage} | 0 |" in finished, finished
    assert "| speech-to-text (openai) | 0 video(s), 0.0 min |" in finished and "Total: $0.0000" in finished
    assert "role output(s) reused" in finished
    # Which replies a redo would ask again: the refiner's of one experiment, exactly; the blind audit
    # of its questions at most (their text may change).
    first = sorted(p.name for p in svb_build.sources.iterdir())[0]
    kept = sum(1 for row in _jsonl(out / "scivideobench_1k.jsonl") if row["video_id"] == first)
    forecast = _dry(args, "--redo", f"refiner:{first}")
    assert f"| svb_refine | {kept} | 0 |" in forecast, forecast  # built exactly, none a bound
    assert f"| blind_audit | {kept} | {kept} |" in forecast, forecast
    assert "| svb_evaluate | 0 |" in forecast and "| svb_compare | 0 |" in forecast
    sent_stt = len(svb_build.stt.transcriptions)
    result = runner.invoke(app, [*args, "--redo", f"refiner:{first}"])
    assert result.exit_code == 0, result.output
    assert _sent(out) == {"llm:svb_refine": kept}  # the blind requests are the cached ones: same questions
    assert len(svb_build.stt.transcriptions) == sent_stt
    assert runner.invoke(app, args).exit_code == 0 and _sent(out) == {}  # the redone stage is reused


def test_redo_stages_of_the_recipe(svb_build: SvbBuild, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(svb_build.out, out)
    args = build_args(svb_build.sources, out, svb_build.llm, svb_build.stt)
    before = (out / "scivideobench_1k.jsonl").read_text(encoding="utf-8")
    generated = svb_build.report["calls"]["by_stage"]["llm:svb_evaluate"]
    questions = generated["requests"] + generated["cache_hits"]
    # The whole evaluator stage: every question evaluated afresh, and the evaluation of the refiner's
    # rewritten options too; the same verdicts make the same comparer and refiner requests, answered
    # by the cache.
    result = runner.invoke(app, [*args, "--redo", "evaluator"])
    assert result.exit_code == 0, result.output
    rechecked = svb_build.report["calls"]["by_stage"]["llm:svb_recheck"]["requests"]
    assert rechecked == 4  # the kept conceptual and hypothetical questions
    assert _sent(out) == {"llm:svb_evaluate": questions, "llm:svb_recheck": rechecked}
    assert (out / "scivideobench_1k.jsonl").read_text(encoding="utf-8") == before
    # Transcription and the blind audit of one experiment.
    first = sorted(p.name for p in svb_build.sources.iterdir())[0]
    sent_stt = len(svb_build.stt.transcriptions)
    result = runner.invoke(app, [*args, "--redo", f"transcription:{first},blind:{first}"])
    assert result.exit_code == 0, result.output
    assert len(svb_build.stt.transcriptions) == sent_stt + 1
    kept = sum(1 for row in _jsonl(out / "scivideobench_1k.jsonl") if row["video_id"] == first)
    assert _sent(out) == {"blind:scivideobench_official_prompt": kept}  # 1 blind sample per question
    refused = runner.invoke(app, [*args, "--redo", "level1"])
    assert refused.exit_code == 2
    assert "unknown stage 'level1' for --redo; stages: transcription, generator, evaluator" in refused.output
