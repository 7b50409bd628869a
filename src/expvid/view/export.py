"""`expvid view --export FILE.html`: the same views as one self-contained file, for sharing.

Everything is inside the file: the overview (rendered by the same template), the item list and
every item page's data as embedded JSON, the page's CSS and JS inline, and the frames sent as
small JPEG thumbnails (data: URLs; identical frames across runs are stored once). It opens from a
file:// URL with no server and no network. Videos are not included (they would make the file as
large as the dataset); the item page says so.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rich.console import Console

from expvid.run.eval_set import PreparedCell
from expvid.schema import DataError
from expvid.view.detail import item_detail
from expvid.view.frames import FrameSet, thumbnail
from expvid.view.render import render_page, static_text
from expvid.view.rows import build_rows
from expvid.view.session import RunView, ViewSession

FrameKey = tuple[str, str, int]


def _script_safe(text: str) -> str:
    """JSON that can sit inside <script type="application/json"> (no `</script>` can end it early)."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def build_bundle(
    session: ViewSession,
    *,
    frames: bool = True,
    thumb_size: int = 112,
    workers: int = 2,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """The export's data: list rows, every item's detail, and the thumbnails they refer to."""
    session.refresh(force=True)
    rows = session.memo("rows", lambda: build_rows(session))
    ids = [row["i"] for row in rows["rows"]]
    thumbs: dict[str, str] = {}
    recovered: dict[FrameKey, dict[str, Any]] = {}
    if frames:
        keys = [
            (run, item_id, sample)
            for item_id in ids
            for sample in session.samples(item_id)
            for run in session.runs
        ]

        def one(key: tuple[RunView, str, int]) -> tuple[FrameKey, FrameSet | None]:
            run, item_id, sample = key
            return (run.key, item_id, sample), session.frame_set(run, item_id, sample)

        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            for done, (key, frame_set) in enumerate(pool.map(one, keys), start=1):
                recovered[key] = _embed(frame_set, thumbs, thumb_size)
                if progress is not None:
                    progress(done, len(keys))

    def frames_ref(run: RunView, item_id: str, sample: int) -> dict[str, Any]:
        found = recovered.get((run.key, item_id, sample))
        if found is not None:
            return found
        record = run.files.predictions.get((item_id, sample))
        recorded = [{"index": f.index, "time": f.time} for f in record.model.frames] if record else []
        return {
            "source": "unavailable",
            "note": "frames were left out of this export",
            "recorded": recorded,
            "frames": [],
        }

    details = {item_id: item_detail(session, item_id, frames_ref, lambda _id: None) for item_id in ids}
    return {"list": rows, "details": details, "thumbs": thumbs}


def _embed(frame_set: FrameSet | None, thumbs: dict[str, str], size: int) -> dict[str, Any]:
    if frame_set is None:
        return {
            "source": "unavailable",
            "note": "the item is not in the dataset",
            "recorded": [],
            "frames": [],
        }
    frames = []
    for frame in frame_set.frames:
        small = thumbnail(frame.data, size)
        key = hashlib.sha1(small, usedforsecurity=False).hexdigest()[:20]
        if key not in thumbs:
            mime = "image/jpeg" if small is not frame.data else frame.mime
            thumbs[key] = f"data:{mime};base64," + base64.b64encode(small).decode("ascii")
        frames.append({"index": frame.index, "time": frame.time, "label": frame.label, "thumb": key})
    return {
        "source": frame_set.source,
        "note": frame_set.note,
        "mismatch": frame_set.mismatch,
        "recorded": [{"index": f.index, "time": f.time} for f in frame_set.recorded],
        "frames": frames,
    }


def export_html(
    session: ViewSession,
    out: Path,
    *,
    frames: bool = True,
    thumb_size: int = 112,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Write the static bundle to `out`; returns its size in bytes. Never writes into a run."""
    roots = [run.root.resolve() for run in session.runs]
    target = out.resolve()
    if any(target.is_relative_to(root) for root in roots):
        raise DataError(f"{out}: the export must not be written inside a run directory")
    bundle = build_bundle(session, frames=frames, thumb_size=thumb_size, progress=progress)
    js = static_text("view.js")
    if "</script" in js.lower():
        raise RuntimeError("view.js must not contain '</script' to be inlined")
    page = render_page(
        session,
        mode="static",
        inline={
            "css": static_text("view.css"),
            "js": js,
            "bundle": _script_safe(json.dumps(bundle, ensure_ascii=False, separators=(",", ":"))),
        },
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    temp = out.with_name(f".{out.name}.tmp")
    temp.write_text(page, encoding="utf-8")
    temp.replace(out)
    return out.stat().st_size


def export_cell_views(
    cells: Sequence[PreparedCell], out: Path, *, frames: bool, cache_dir: Path | None, console: Console | None
) -> None:
    """An eval set's viewer page per scored cell (`PreparedCell.view_file`), linked from its leaderboard.

    A cell whose page cannot be written is named on `console` and skipped: the report stands without it.
    """
    for prepared in cells:
        run_dir = prepared.config.out
        if not (run_dir / "scores.json").is_file():
            continue
        target = prepared.cell.view_file(out)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            export_html(ViewSession([run_dir], cache_dir=cache_dir), target, frames=frames)
        except (DataError, OSError) as error:
            if console is not None:
                console.print(f"[yellow]view[/]: {prepared.cell.id}: not exported ({error})", highlight=False)
