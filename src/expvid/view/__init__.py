"""`expvid view`: a read-only viewer of run directories (served locally, or exported as one file).

Shows what each model saw (the frames sent), said (prompt, response, reasoning) and scored
(extraction rule, judge verdicts, score), item by item and run beside run. Nothing here writes to
a run directory or to the frame cache. See docs/view.md.
"""

from expvid.view.app import create_app
from expvid.view.export import build_bundle, export_html
from expvid.view.session import ViewSession

__all__ = ["ViewSession", "build_bundle", "create_app", "export_html"]
