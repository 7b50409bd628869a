"""What `expvid export inspect` writes, checked without Inspect installed (tests/export_inspect runs it):
the items' messages as expvid sends them, frames written once, an item whose video cannot be read left
out and named, and `score --from inspect` saying what it needs when Inspect is not installed."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.suites.registry import get_suite

runner = CliRunner()


@pytest.fixture(scope="module")
def release(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ExpVid sample's tools task, one of its videos missing."""
    root = tmp_path_factory.mktemp("inspect_export") / "release"
    shutil.copytree(sample_dir / "annotations", root / "annotations")
    shutil.copytree(sample_dir / "videos", root / "videos")
    first = json.loads((root / "annotations" / "level1" / "tools.jsonl").read_text().splitlines()[0])
    (root / first["video_path"]).unlink()
    return root


def test_the_package_holds_the_messages_expvid_sends(release: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", "inspect", str(release), "--out", str(tmp_path / "pkg"), "--tasks", "tools",
                                 "--frames", "all=3"])  # fmt: skip
    assert result.exit_code == 0, result.output
    suite = get_suite("expvid")
    items = {item.id: item for item in suite.load(release, tasks=["tools"]).items}
    missing = sorted(i for i, item in items.items() if not Path(item.media.path).exists())  # type: ignore[union-attr]
    package = tmp_path / "pkg" / "expvid_expvid"
    export = json.loads((package / "export.json").read_text())
    assert sorted(export["left_out"]) == missing and "tools/0" in missing
    assert "media could not be read" in export["left_out"]["tools/0"]
    kept = len(items) - len(missing)
    assert f"wrote {kept} sample(s)" in result.output and f"{len(missing)} item(s) left out" in result.output
    assert export["frames"]["size"] == 224 and export["frames"]["counts"] == {
        "all": 3
    }  # F.2's squash, as eval
    lines = [json.loads(line) for line in (package / "samples.jsonl").read_text().splitlines()]
    assert len(lines) == kept
    files = set()
    for line in lines:
        (message,) = line["messages"]
        *frames, text = message["content"]
        assert text == {"text": suite.prompt_text(items[line["id"]])}  # images first, then the prompt
        assert len(frames) == len(line["frames"]) == 3 and line["target"] == items[line["id"]].answer
        for frame in frames:
            assert (package / frame["image"]).read_bytes()[:3] == b"\xff\xd8\xff"  # JPEG
            files.add(frame["image"])
    assert len(list((package / "frames").iterdir())) == len(files)  # one file per distinct frame
    project = tomllib.loads((tmp_path / "pkg" / "pyproject.toml").read_text())
    assert project["project"]["entry-points"]["inspect_ai"] == {"expvid_expvid": "expvid_expvid._registry"}


def test_reading_inspect_logs_needs_inspect(tmp_path: Path) -> None:
    pytest.importorskip("expvid")
    try:
        import inspect_ai  # noqa: F401

        pytest.skip("inspect-ai is installed here")
    except ImportError:
        pass
    (tmp_path / "logs").mkdir()
    result = runner.invoke(app, ["score", "--from", "inspect", str(tmp_path / "logs")])
    assert result.exit_code == 2
    assert "reading Inspect logs needs inspect-ai in this environment: pip install inspect-ai" in " ".join(
        result.output.split()
    )
