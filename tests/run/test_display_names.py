"""Rows are labelled with the model's name, not its whole spec and server URL; the spec stays in reach
(HTML tooltip, Markdown footnote, CSV column), and two runs never share a label."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.run.compare import compare_runs, format_comparison
from expvid.run.report import build_table, load_runs, to_csv, to_markdown
from expvid.run.report.display_names import display_name, display_names
from expvid.run.report.html import to_html
from expvid.suites.registry import get_suite

runner = CliRunner()


def test_the_name_is_the_model_without_provider_or_server():
    assert display_name("openai:gpt-4o@http://127.0.0.1:8000/v1") == "gpt-4o"
    assert display_name("openai:Qwen/Qwen2.5-VL-7B-Instruct@http://a:1/v1,http://b:1/v1") == (
        "Qwen/Qwen2.5-VL-7B-Instruct"
    )
    assert display_name("anthropic:claude-sonnet-4-20250514") == "claude-sonnet-4-20250514"
    assert display_name("vllm:/models/ckpt/Qwen2-VL-7B/") == "Qwen2-VL-7B"
    assert display_name("hf:llava-hf/LLaVA-NeXT-Video-7B-hf") == "LLaVA-NeXT-Video-7B-hf"
    assert display_name("blind:openai:gpt-4o@http://h:1/v1") == "gpt-4o (blind)"
    assert display_name("socratic:openai:cap@http://h:1/v1+anthropic:ans") == "socratic cap + ans"
    assert [display_name(s) for s in ("random", "random:3", "first-option")] == [
        "random",
        "random:3",
        "first-option",
    ]


def test_names_that_would_clash_are_told_apart_by_what_differs():
    same_model_two_servers = [
        "openai:gpt-4o@http://10.0.0.1:8000/v1",
        "openai:gpt-4o@http://10.0.0.2:8000/v1",
    ]
    assert display_names(same_model_two_servers) == ["gpt-4o (10.0.0.1:8000)", "gpt-4o (10.0.0.2:8000)"]
    assert display_names(["openai:m@http://h:1/v1", "gemini:m"]) == ["m (openai)", "m (gemini)"]
    assert display_names(["openai:gpt-4o", "openai:gpt-4o@http://proxy:9/v1"]) == [
        "gpt-4o (default endpoint)",
        "gpt-4o (proxy:9)",
    ]
    assert display_names(["hf:/a/ckpt-100", "hf:/b/ckpt-100"]) == ["ckpt-100 (/a)", "ckpt-100 (/b)"]
    assert display_names(["openai:x@http://h:1/v1"] * 2, ["run-1", "run-2"]) == ["x (run-1)", "x (run-2)"]
    assert display_names(["openai:x"] * 2, ["same", "same"]) == ["x #1", "x #2"]


_specs = st.sampled_from(
    ["openai:gpt-4o", "openai:gpt-4o@http://a:1/v1", "openai:gpt-4o@http://b:1/v1", "gemini:gpt-4o",
     "hf:/x/gpt-4o", "random", "random:1", "blind:openai:gpt-4o", "vllm:/y/gpt-4o"]
)  # fmt: skip


@given(st.lists(st.tuples(_specs, st.sampled_from(["r1", "r2", "r1"])), min_size=1, max_size=6))
def test_every_run_gets_a_label_of_its_own_that_starts_with_its_name(runs: list[tuple[str, str]]):
    labels = display_names([spec for spec, _ in runs], [folder for _, folder in runs])
    assert len(set(labels)) == len(labels)
    assert all(label.startswith(display_name(spec)) for label, (spec, _) in zip(labels, runs, strict=True))


def _eval(sample_dir: Path, model: str, out: Path, cache: Path) -> None:
    result = runner.invoke(
        app,
        ["eval", "--data", str(sample_dir), "--model", model, "--out", str(out), "--tasks", "tools",
         "--limit", "2", "--cache-dir", str(cache), "--price", "1,1", "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output


def test_reports_show_the_name_and_keep_the_spec(sample_dir, tmp_path, frame_cache_dir, model_server):
    spec = f"openai:lab-vlm-7b@{model_server.openai_base_url}"
    served, baseline = tmp_path / "served", tmp_path / "baseline"
    _eval(sample_dir, spec, served, frame_cache_dir)
    _eval(sample_dir, "first-option", baseline, frame_cache_dir)
    runs = load_runs([served, baseline])
    assert [run.label for run in runs] == ["lab-vlm-7b", "first-option"]
    table = build_table(get_suite("expvid"), runs, references=[])

    markdown = to_markdown(table)
    rows = [line for line in markdown.splitlines() if line.startswith("| **")]
    assert [row.split("|")[1].strip() for row in rows] == [
        "**lab-vlm-7b (partial)**",
        "**first-option (partial)**",
    ]
    assert "http://" not in "".join(rows)  # the URL is not in the table ...
    assert f"- lab-vlm-7b: model `{spec}`" in markdown  # ... but in its footnote
    assert "first-option: model" not in markdown  # a name that is its spec needs none

    page = to_html(table, runs, title="t")
    assert f"<td class=model title='{spec}'>lab-vlm-7b (partial)</td>" in page
    assert "<td class=model>first-option (partial)</td>" in page

    by_model = {row["model"]: row for row in csv.DictReader(io.StringIO(to_csv(table)))}
    assert by_model["lab-vlm-7b (partial)"]["model spec"] == spec
    assert by_model["first-option (partial)"]["model spec"] == "first-option"

    compared = format_comparison(compare_runs(served, baseline, n_boot=10))
    assert (
        f"\n\n- A = lab-vlm-7b: `{spec}` ({served})\n- B = first-option: `first-option` ({baseline})\n"
        in compared
    )
