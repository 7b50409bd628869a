"""The build state directory `CANDIDATES_DIR/.build/`: what survives a crash.

- `cache/responses.sqlite3`: every model reply, keyed by the full request (`expvid.models` cache);
  a re-run asks the model nothing it has already answered, even inside an unfinished stage.
- `stages/<video_id>/<stage>.json`: a finished stage's output (`StageOutput`), written atomically,
  with the fingerprint of the settings, prompts and source files it was made from. A re-run reuses it
  when the fingerprint matches and recomputes it otherwise. A stage that lost items to a backend
  failure is not saved, so it is retried.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import ValidationError

from expvid.construction.drafts import StageOutput
from expvid.schema import DataError

STATE_DIR = ".build"


def check_out_dir(out: Path) -> None:
    """Refuse an output folder that is a file, or a non-empty folder no build made: never write over
    someone's files (a folder with `.build/` is a build's own, to resume)."""
    if out.exists() and not out.is_dir():
        raise DataError(f"{out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / STATE_DIR).is_dir():
        raise DataError(
            f"refusing to write into {out}: it is not empty and was not made by expvid build "
            f"(no {STATE_DIR}/ folder); choose a new or empty directory"
        )


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` via a temporary file and a rename: readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8", newline="\n")
    os.replace(partial, path)


def epoch_of(epochs: dict[str, int], stage: str, experiment: str | None) -> int:
    """The `--redo` epoch of a stage for one experiment: redos of the whole stage (`level1`) plus redos
    of that experiment's stage alone (`level1:61842`)."""
    total = epochs.get(stage, 0)
    if experiment:
        total += epochs.get(f"{stage}:{experiment}", 0)
    return total


class BuildState:
    def __init__(self, out: Path, *, create: bool = True) -> None:
        """`create=False`: read only (`--dry-run` judges saved stages exactly as the build will)."""
        self.root = out / STATE_DIR
        if create:
            self.root.mkdir(parents=True, exist_ok=True)
        self.reused = 0
        self.saved = 0
        #: `--redo` epochs per stage (`retries.RetryBook`): a stage saved in an earlier epoch is redone.
        self.epochs: dict[str, int] = {}

    def stamp(self, stage: str, fingerprint: str, video_id: str) -> str:
        """The fingerprint as a stage made in this run is saved with (its `--redo` epoch appended)."""
        return self._stamp(stage, fingerprint, video_id)

    def saved_output(self, video_id: str, stage: str) -> StageOutput | None:
        """The saved output of a stage whatever it was made from (the dry run compares it with
        today's inputs), or None."""
        try:
            return StageOutput.model_validate_json(self._path(video_id, stage).read_text(encoding="utf-8"))
        except (OSError, ValidationError, ValueError):
            return None

    def has(self, video_id: str, stage: str) -> bool:
        """Whether some output of this stage was saved (whatever it was made from)."""
        return self._path(video_id, stage).is_file()

    def _stamp(self, stage: str, fingerprint: str, video_id: str) -> str:
        epoch = epoch_of(self.epochs, stage, video_id)
        if not epoch or not fingerprint or fingerprint.endswith(f"@{epoch}"):
            return fingerprint
        return f"{fingerprint}@{epoch}"

    @property
    def cache_dir(self) -> Path:
        return self.root / "cache"

    def _path(self, video_id: str, stage: str) -> Path:
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in video_id)
        return self.root / "stages" / safe / f"{stage}.json"

    def load(self, video_id: str, stage: str, fingerprint: str) -> StageOutput | None:
        """The saved output of a finished stage made with the same fingerprint, else None."""
        path = self._path(video_id, stage)
        try:
            output = StageOutput.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError, ValueError):
            return None
        if output.fingerprint != self._stamp(stage, fingerprint, video_id) or output.video_id != video_id:
            return None
        self.reused += 1
        return output

    def resume(self, video_id: str, stage: str, fingerprint: str) -> tuple[StageOutput, bool]:
        """The saved output of a finished stage made with the same fingerprint and True, else a new
        output of the stage (carrying the fingerprint) to fill and False."""
        saved = self.load(video_id, stage, fingerprint)
        if saved is not None:
            return saved, True
        return StageOutput(video_id=video_id, stage=stage, fingerprint=fingerprint), False

    def save(self, output: StageOutput) -> None:
        if not output.complete:
            return
        output.fingerprint = self._stamp(
            output.stage, output.fingerprint, output.video_id
        )  # later stages hash this one
        write_atomic(self._path(output.video_id, output.stage), output.model_dump_json())
        self.saved += 1

    def write_json(self, name: str, value: object) -> None:
        write_atomic(self.root / name, json.dumps(value, indent=1, ensure_ascii=False) + "\n")
