"""SciVideoBench: 1,000 ten-option questions on research-grade JoVE experiment videos.

`SciVideoBenchSuite` runs it as the official lmms-eval task does (prompt with the mm:ss ->
"frame N" rewrite, greedy decoding, official extraction as a named mode beside strict
extraction); `load_scivideobench` reads the release; `make_scivideobench_sample` writes a small
set in the published shapes.
"""

from expvid.suites.scivideobench.prompts import build_prompt
from expvid.suites.scivideobench.sample import make_scivideobench_sample
from expvid.suites.scivideobench.suite import SciVideoBenchSuite, load_scivideobench
from expvid.suites.scivideobench.timestamps import times_to_frames

__all__ = [
    "SciVideoBenchSuite",
    "build_prompt",
    "load_scivideobench",
    "make_scivideobench_sample",
    "times_to_frames",
]
