"""`expvid sample make --suite`, `expvid eval --suite` and `expvid report` for the three suites."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from expvid.cli.main import app

runner = CliRunner()


def test_sample_make_for_each_suite_and_refusal_to_overwrite(tmp_path, plain) -> None:
    for suite, marker in (
        ("scivideobench", "scivideobench_1k.jsonl"),
        ("promqa", "examples.json"),
        ("sfe", "images"),
    ):
        result = runner.invoke(app, ["sample", "make", str(tmp_path / suite), "--suite", suite])
        assert result.exit_code == 0, result.output
        assert (tmp_path / suite / marker).exists() and f"Sample {suite} benchmark" in plain(result.output)
    again = runner.invoke(app, ["sample", "make", str(tmp_path / "sfe"), "--suite", "promqa"])
    assert again.exit_code == 1 and "not empty (a sfe sample)" in plain(again.output)
    forced = runner.invoke(app, ["sample", "make", str(tmp_path / "sfe"), "--suite", "sfe", "--force"])
    assert forced.exit_code == 0
    unknown = runner.invoke(app, ["sample", "make", str(tmp_path / "x"), "--suite", "nosuch"])
    assert unknown.exit_code != 0 and "unknown suite 'nosuch'" in plain(unknown.output)


def test_eval_and_report_from_the_command_line(svb_sample, tmp_path, plain) -> None:
    out = tmp_path / "run"
    args = [
        "eval",
        "--suite",
        "scivideobench",
        "--data",
        str(svb_sample),
        "--model",
        "random",
        "--out",
        str(out),
    ]
    result = runner.invoke(
        app,
        [
            *args,
            "--no-cache",
            "--quiet",
            "-S",
            "keep_times=true",
            "-S",
            "frame_preset=gpt-4o",
            "--frames",
            "all=8",
        ],
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    # lmms-eval gives its GPT-4V/4o wrapper the gpt4v post prompt: the preset does too
    recorded = manifest["config"]["suite_settings"]
    assert recorded["keep_times"] is True and recorded["post_prompt"] == "gpt4v"
    assert recorded["frame_preset"] == "gpt-4o" and recorded["cot"] == "off"  # every setting, resolved
    assert manifest["config"]["identity"]["suite_settings"]["post_prompt"] == "gpt4v"
    sampler = manifest["samplers"]["conceptual"]
    assert sampler["num_frames"] == 8  # --frames wins over the preset's 256
    assert sampler["size"] is None and sampler["max_side"] is None  # "native processing": source size
    assert manifest["config"]["identity"]["frames"]["conceptual"]["size"] is None
    assert "[official extraction]" in plain(result.output)
    report = runner.invoke(app, ["report", str(out), "--reference", "Gemini-2.5-Pro"])
    assert (
        report.exit_code == 0
        and "Gemini-2.5-Pro (paper)" in plain(report.output)
        and "Hypothetical" in plain(report.output)
    )


def test_options_that_do_not_apply_fail_before_any_work(svb_sample, promqa_sample, tmp_path, plain) -> None:
    base = [
        "eval",
        "--data",
        str(svb_sample),
        "--model",
        "random",
        "--out",
        str(tmp_path / "run"),
        "--no-cache",
    ]
    wrong_language = runner.invoke(app, [*base, "--suite", "scivideobench", "-S", "language=zh"])
    assert wrong_language.exit_code == 2 and "unknown scivideobench setting 'language'" in plain(
        wrong_language.output
    )
    wrong_variant = runner.invoke(app, [*base, "--suite", "scivideobench", "-S", "chain=true"])
    assert wrong_variant.exit_code == 2 and "unknown scivideobench setting 'chain'" in plain(
        wrong_variant.output
    )
    bad_preset = runner.invoke(app, [*base, "--suite", "scivideobench", "-S", "frame_preset=gpt-5"])
    assert bad_preset.exit_code != 0 and "unknown frame preset" in plain(bad_preset.output)
    assert "frame_preset='gpt-5'" in plain(bad_preset.output)  # one line, naming the key and value
    bad_value = runner.invoke(app, [*base, "--suite", "scivideobench", "-S", "keep_times=maybe"])
    assert bad_value.exit_code == 2 and "scivideobench setting keep_times='maybe'" in plain(bad_value.output)
    not_a_pair = runner.invoke(app, [*base, "--suite", "scivideobench", "-S", "keep_times"])
    assert not_a_pair.exit_code == 2 and "-S expects KEY=VALUE" in plain(not_a_pair.output)
    promqa = [
        "eval",
        "--data",
        str(promqa_sample),
        "--model",
        "random",
        "--out",
        str(tmp_path / "p"),
        "--no-cache",
    ]
    frames = runner.invoke(app, [*promqa, "--suite", "promqa", "--frames", "L1=8"])
    assert frames.exit_code == 2 and "use --max-frames" in plain(frames.output)
    assert not (tmp_path / "run").exists() and not (tmp_path / "p").exists()


def test_the_old_per_suite_flags_still_work_with_a_deprecation_notice(svb_sample, tmp_path, plain) -> None:
    out = tmp_path / "run"
    result = runner.invoke(
        app,
        ["eval", "--suite", "scivideobench", "--data", str(svb_sample), "--model", "random", "--out", str(out),
         "--no-cache", "--quiet", "--tasks", "conceptual", "--keep-times", "--frame-preset=gpt-4o",
         "--variant", "sampling=strict", "--frames", "all=2"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = plain(result.output)
    assert "--keep-times is deprecated and will be removed; write -S keep_times=true" in text
    assert "--frame-preset is deprecated and will be removed; write -S frame_preset=gpt-4o" in text
    recorded = json.loads((out / "manifest.json").read_text())["config"]["suite_settings"]
    assert recorded["keep_times"] is True and recorded["frame_preset"] == "gpt-4o"
    assert recorded["sampling"] == "strict"  # --variant KEY=VALUE pairs are settings too
    assert json.loads((out / "manifest.json").read_text())["samplers"]["conceptual"]["strategy"] == "uniform"


def test_suites_are_listed_and_shown_with_their_settings(plain) -> None:
    listing = runner.invoke(app, ["suites", "list"])
    assert listing.exit_code == 0
    names = [line.split()[0] for line in listing.output.splitlines() if line.strip()]
    assert names[0] == "expvid" and {"scivideobench", "promqa", "sfe"} <= set(names)
    shown = runner.invoke(app, ["suites", "show", "sfe"])
    assert shown.exit_code == 0
    text = shown.output  # printed as written, one setting per line
    assert "language = en  (one of en, zh, both)" in text and "source: SFE §3" in text
    assert "judge_input = raw  (one of raw, stripped; scoring only" in text
    help_text = runner.invoke(app, ["eval", "--suite", "scivideobench", "--help"])
    assert help_text.exit_code == 0 and "sampling = official  (one of official, strict)" in help_text.output
    unknown = runner.invoke(app, ["suites", "show", "nosuch"])
    assert unknown.exit_code == 2 and "unknown suite 'nosuch'" in plain(unknown.output)
