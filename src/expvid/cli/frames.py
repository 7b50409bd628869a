"""`expvid frames`: which frames would a model see? Prints them as JSON, optionally writes the images.

The command is a thin shell over `expvid.media.sample_video`: the same frames, the same cache, the
same errors (a `MediaError` becomes a one-line message and exit code 1).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from expvid.cli.common_options import MaxFrames


def frames_command(
    video: Annotated[Path, typer.Argument(help="Video file to sample.", show_default=False)],
    num: Annotated[
        int | None, typer.Option("--num", "-n", help="N frames at the midpoints of N equal segments.")
    ] = None,
    fps: Annotated[float | None, typer.Option("--fps", help="Frames per second instead of --num.")] = None,
    max_frames: MaxFrames = None,
    keep_last: Annotated[
        bool, typer.Option("--keep-last", help="Thin --fps frames from the end, keeping the last.")
    ] = False,
    times: Annotated[
        list[float] | None, typer.Option("--time", "-t", help="Explicit target time in seconds (repeatable).")
    ] = None,
    start: Annotated[
        float | None,
        typer.Option(
            "--start",
            help="Window start (s from the video's time 0, as a player counts: an MPEG-TS's first frame); "
            "default: video start.",
        ),
    ] = None,
    end: Annotated[float | None, typer.Option("--end", help="Window end (s); default: video end.")] = None,
    size: Annotated[int | None, typer.Option("--size", help="Square output side (default 224).")] = None,
    max_side: Annotated[
        int | None, typer.Option("--max-side", help="Keep the aspect ratio, longest side at most K.")
    ] = None,
    full_size: Annotated[bool, typer.Option("--full-size", help="Keep the display size.")] = False,
    image_format: Annotated[str, typer.Option("--format", help="jpeg or png.")] = "jpeg",
    quality: Annotated[int, typer.Option("--quality", help="JPEG quality.")] = 90,
    out: Annotated[Path | None, typer.Option("--out", help="Write the images into this directory.")] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the frame cache.")
    ] = False,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Frame cache directory (default $EXPVID_CACHE_DIR).")
    ] = None,
) -> None:
    """Print the frames chosen from VIDEO (index, time, target) as JSON; --out writes the images."""
    from expvid.media.cache import FrameCache
    from expvid.media.errors import MediaError
    from expvid.media.sampler import sample_video

    modes = sum([num is not None, fps is not None, bool(times)])
    if modes != 1:
        _fail("give exactly one of --num, --fps or --time", code=2)
    if sum([size is not None, max_side is not None, full_size]) > 1:
        _fail("give at most one of --size, --max-side or --full-size", code=2)
    square = None if (max_side is not None or full_size) else (size if size is not None else 224)
    cache: FrameCache | bool = False if no_cache else (FrameCache(cache_dir) if cache_dir else True)
    try:
        sampled = sample_video(
            video,
            num_frames=num,
            fps=fps,
            max_frames=max_frames,
            thinning="keep_last" if keep_last else "uniform",
            times=times or None,
            start=start,
            end=end,
            size=square,
            max_side=max_side,
            image_format=image_format,
            quality=quality,
            cache=cache,
        )
        report = sampled.to_dict()
        if out is not None:
            paths = sampled.save(out)
            for frame, path in zip(report["frames"], paths, strict=True):
                frame["file"] = str(path)
    except MediaError as error:
        _fail(str(error))
    except OSError as error:
        _fail(f"{error.filename or out}: {error.strerror or error}")
    typer.echo(json.dumps(report, indent=2))


def _fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=code)
