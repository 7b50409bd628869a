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
    unknown = runner.invoke(app, ["sample", "make", str(tmp_path / "x"), "--suite", "mmvu"])
    assert unknown.exit_code != 0


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
        app, [*args, "--no-cache", "--quiet", "--keep-times", "--frame-preset", "gpt-4o", "--frames", "all=8"]
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    # lmms-eval gives its GPT-4V/4o wrapper the gpt4v post prompt: the preset does too
    assert manifest["config"]["settings"]["prompt"]["variant"] == {"keep_times": True, "post_prompt": "gpt4v"}
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
    wrong_language = runner.invoke(app, [*base, "--suite", "scivideobench", "--language", "zh"])
    assert wrong_language.exit_code == 2 and "takes no suite options" in plain(wrong_language.output)
    wrong_variant = runner.invoke(app, [*base, "--suite", "scivideobench", "--variant", "chain"])
    assert wrong_variant.exit_code == 2 and "unknown SciVideoBench prompt variant" in plain(
        wrong_variant.output
    )
    bad_preset = runner.invoke(app, [*base, "--suite", "scivideobench", "--frame-preset", "gpt-5"])
    assert bad_preset.exit_code != 0 and "unknown frame preset" in plain(bad_preset.output)
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
