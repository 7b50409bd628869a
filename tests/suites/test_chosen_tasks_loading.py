"""A run of some tasks reads only their records; the dataset's fingerprint is still the whole root's.

Loading and validating all ten files of the full release costs about a second (6,945 records);
a `--tasks tools` run needs one file. What must not change is what identifies the data: the
fingerprint over every task file and the media their records name, the same as loading everything,
also when the videos folder is a link elsewhere (as on clusters), so run directories made before
resume and comparisons stay possible.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.suites.registry import get_suite

runner = CliRunner()


def test_chosen_tasks_are_loaded_and_the_fingerprint_is_the_whole_roots(
    sample_dir: Path, tmp_path: Path
) -> None:
    root = tmp_path / "release"
    shutil.copytree(sample_dir / "annotations", root / "annotations")
    shutil.copytree(sample_dir / "videos", tmp_path / "elsewhere" / "videos")
    (root / "videos").symlink_to(tmp_path / "elsewhere" / "videos")  # videos on another disk
    suite = get_suite("expvid")
    everything = suite.load(root, check_media=False)
    chosen = suite.load(root, tasks=["tools"], check_media=False)
    assert {item.task for item in chosen.items} == {"tools"} and len(chosen.items) < len(everything.items)
    assert chosen.fingerprint() == everything.fingerprint()
    assert chosen.media_sizes() == everything.media_sizes()
    assert [item.media for item in chosen.items] == [
        item.media for item in everything.items if item.task == "tools"
    ]

    # A video of another task missing: the fingerprint says so, the chosen task's check does not.
    other = next(item for item in everything.items if item.task == "sequence_generation")
    Path(other.media.path).unlink()  # type: ignore[union-attr]
    assert suite.load(root, tasks=["tools"], check_media=False).fingerprint() != chosen.fingerprint()
    checked = runner.invoke(app, ["data", "check", str(root), "--tasks", "tools"])
    assert checked.exit_code == 0, checked.output


def test_a_run_directory_recording_every_tasks_prompts_resumes(sample_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["eval", "--data", str(sample_dir), "--model", "first-option", "--tasks", "tools", "--limit", "2",
            "--frames", "L1=2", "--size", "32", "--no-cache", "--quiet", "--out", str(out)]  # fmt: skip
    assert runner.invoke(app, args).exit_code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    identity = manifest["config"]["identity"]
    assert set(identity["prompt"]) == {"tools"}  # only the task the run loaded
    # As a release that loaded every file wrote it: prompts and samplers of all ten tasks.
    identity["prompt"]["materials"] = "0" * 64
    identity["frames"]["materials"] = identity["frames"]["tools"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    resumed = runner.invoke(app, args)
    assert resumed.exit_code == 0, resumed.output
    more = runner.invoke(app, [*args[:-2], "--out", str(out), "--tasks", "tools,operation"])
    assert more.exit_code == 0, more.output  # a task added on resume: no difference to refuse
