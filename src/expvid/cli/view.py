"""`expvid view RUN [RUN ...]`: look at what each model saw, said and scored, in a browser.

Imports of the web stack happen inside the command, so `expvid --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def view_command(
    runs: Annotated[list[Path], typer.Argument(help="One or more run directories (side by side).")],
    port: Annotated[int, typer.Option("--port", help="TCP port; 0 picks a free one.")] = 8765,
    host: Annotated[
        str, typer.Option("--host", help="Interface to listen on (loopback by default).")
    ] = "127.0.0.1",
    export: Annotated[
        Path | None,
        typer.Option(
            "--export", help="Write a self-contained HTML file (frames as thumbnails) instead of serving."
        ),
    ] = None,
    data: Annotated[
        Path | None, typer.Option("--data", help="Dataset root, when the one the manifest names has moved.")
    ] = None,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="The --cache-dir the runs used, when it has moved.")
    ] = None,
    frames: Annotated[
        bool, typer.Option("--frames/--no-frames", help="Export: include frame thumbnails.")
    ] = True,
    thumb_size: Annotated[
        int, typer.Option("--thumb-size", min=32, max=512, help="Export: thumbnail side.")
    ] = 112,
) -> None:
    """Serve a read-only viewer of RUNS (prints its URL), or write it as one HTML file with --export."""
    from expvid.commands.errors import friendly_errors

    with friendly_errors():
        from rich.console import Console

        from expvid.view import ViewSession, export_html

        console = Console(stderr=True)
        session = ViewSession(list(runs), data=data, cache_dir=cache_dir)
        for run in session.runs:
            if run.dataset.note:
                console.print(f"[yellow]{run.label}:[/] {run.dataset.note}", highlight=False)
        if export is not None:
            with console.status("exporting…") as status:
                size = export_html(
                    session,
                    export,
                    frames=frames,
                    thumb_size=thumb_size,
                    progress=lambda done, total: status.update(f"frames {done}/{total}"),
                )
            typer.echo(f"wrote {export} ({size / 1e6:.1f} MB); open it in a browser, no server needed")
            return

        from expvid.view.serve import serve

        def ready(url: str) -> None:
            typer.echo(f"expvid view: {url}  (read-only; Ctrl-C to stop)")

        try:
            serve(session, host=host, port=port, ready=ready)
        except OSError as error:
            raise typer.BadParameter(f"cannot listen on {host}:{port}: {error}") from None
