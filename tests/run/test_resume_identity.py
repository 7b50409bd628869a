"""One run directory, one configuration: what can change an answer is compared on resume, resolved.

Backend options (extra body fields, dtype, vLLM arguments) are part of the identity; passing a
default explicitly (the paper's temperature, token limit and frame counts, the options model's
defaults) is the same configuration; operational settings (endpoints, concurrency, limits) may
change; a refusal prints each difference; a run directory made before this identity still resumes.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer, Reply
from expvid.suites.expvid_suite import load_expvid

runner = CliRunner()


def _eval(sample_dir: Path, out: Path, cache: Path, model: str, *extra: str) -> tuple[int, str]:
    args = ["eval", "--data", str(sample_dir), "--out", str(out), "--tasks", "tools", "--limit", "3",
            "--model", model, "--cache-dir", str(cache), "--quiet", "--frames", "L1=2", "--size", "32", *extra]  # fmt: skip
    result = runner.invoke(app, args)
    return result.exit_code, result.output


def test_backend_options_are_compared_and_defaults_resolved(sample_dir, tmp_path, frame_cache_dir) -> None:
    out = tmp_path / "run"
    with LoopbackServer(Reply.ok("\\boxed{A}")) as server, LoopbackServer(Reply.ok("\\boxed{A}")) as other:
        model = f"openai:loopback@{server.openai_base_url}"
        code, output = _eval(
            sample_dir, out, frame_cache_dir, model, "--backend-option", 'extra_body={"top_k": 20}'
        )
        assert code == 0, output
        identity = json.loads((out / "manifest.json").read_text())["config"]["identity"]
        assert identity["backend"]["extra_body"] == {"top_k": 20}
        assert (identity["temperature"], identity["max_tokens"]) == (0.1, 8192)  # resolved, not None
        assert identity["frames"]["tools"]["num_frames"] == 2 and "base_url" not in identity["backend"]

        # The same configuration spelled out: paper defaults and option defaults given explicitly,
        # another server for the same model, other operational settings.
        code, output = _eval(
            sample_dir, out, frame_cache_dir, f"openai:loopback@{other.openai_base_url}",
            "--backend-option", 'extra_body={"top_k": 20}', "--backend-option", "dtype=auto",
            "--temperature", "0.1", "--max-tokens", "8192", "--concurrency", "2", "--timeout", "30",
        )  # fmt: skip
        assert code == 0, output

        # Another extra body field, another token limit: refused, each difference on its own line.
        code, output = _eval(
            sample_dir, out, frame_cache_dir, model,
            "--backend-option", 'extra_body={"top_k": 1}', "--max-tokens", "64", "--vllm-args", "--max-model-len 4096",
        )  # fmt: skip
        assert code == 2
        lines = output.splitlines()
        assert "  backend.extra_body.top_k: run has 20, now 1" in lines
        assert "  max_tokens: run has 8192, now 64" in lines
        assert "  backend.vllm_args: run has [], now ['--max-model-len', '4096']" in lines
        assert any("use a new --out" in line for line in lines)

        # A frame count that gives another sampler, a prompt option that changes the prompt texts.
        code, output = _eval(
            sample_dir, out, frame_cache_dir, model, "--backend-option", 'extra_body={"top_k": 20}',
            "--frames", "L1=4", "-S", "with_asr=true",
        )  # fmt: skip
        assert code == 2
        assert "  frames.tools.num_frames: run has 2, now 4" in output.splitlines()
        assert any(line.startswith("  prompt.tools: the prompt texts differ") for line in output.splitlines())
        assert "  suite_settings.with_asr: run has False, now True" in output.splitlines()


def test_a_run_directory_from_before_the_resolved_identity_resumes(
    sample_dir, tmp_path, frame_cache_dir
) -> None:
    out = tmp_path / "old"
    code, output = _eval(sample_dir, out, frame_cache_dir, "random")
    assert code == 0, output
    # Rewrite the manifest as the previous release wrote it: the raw identity, an annotations-only
    # fingerprint, no media inventory.
    manifest = json.loads((out / "manifest.json").read_text())
    settings = manifest["config"]["settings"]
    old_prompt = {"with_asr": False, "variant": {}}  # how that release recorded prompt options
    settings["prompt"] = old_prompt
    del settings["suite_settings"], manifest["config"]["suite_settings"]
    manifest["config"]["identity"] = {
        "suite": "expvid", "model": "random", "frames": settings["frames"], "prompt": old_prompt,
        "temperature": None, "max_tokens": None, "seed": 0,
    }  # fmt: skip
    manifest["dataset_fingerprint"] = load_expvid(sample_dir).annotations_fingerprint()
    del manifest["annotations_fingerprint"], manifest["dataset_media"]
    (out / "manifest.json").write_text(json.dumps(manifest))

    code, output = _eval(
        sample_dir, out, frame_cache_dir, "random", "--temperature", "0.1", "--backend-option", "max_images=4"
    )
    assert code == 0, output
    assert "predates backend options in the resume identity" in output  # not compared: said so
    code, output = _eval(sample_dir, out, frame_cache_dir, "random", "--temperature", "0.7")
    assert code == 2 and "  temperature: run has 0.1, now 0.7" in output.splitlines()


def test_a_setting_added_after_the_run_started_is_accepted_at_its_default(
    sample_dir, tmp_path, frame_cache_dir
) -> None:
    out = tmp_path / "run"
    code, output = _eval(sample_dir, out, frame_cache_dir, "random")
    assert code == 0, output
    # As if `samples` and the backend option `frames_as` had been added in a later release.
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["config"]["identity"]["samples"], manifest["config"]["identity"]["backend"]["frames_as"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    code, output = _eval(sample_dir, out, frame_cache_dir, "random", "--backend-option", "frames_as=images")
    assert code == 2 and "  backend.frames_as: not in the run, now 'images'" in output.splitlines()
    code, output = _eval(sample_dir, out, frame_cache_dir, "random", "--samples", "2")
    assert code == 2 and "  samples: not in the run, now 2" in output.splitlines()
    code, output = _eval(sample_dir, out, frame_cache_dir, "random", "--backend-option", "frames_as=auto")
    assert code == 0, output
