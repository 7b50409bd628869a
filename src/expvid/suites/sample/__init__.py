"""The bundled sample benchmark: a small, deterministic ExpVid-format release of synthetic videos.

`make_sample(dir, seed=0)` writes, in a few seconds, a release in exactly the published layout
(ten tasks, pre-cut clips, Level-3 videos) that is also a complete candidate directory (provenance with
source windows, Level-2 segments with timed steps, experiments, papers), the raw sources the build
pipeline starts from, and a truth sidecar recording which source frames every clip holds. Nothing large is committed: the
experiment scripts in `protocols/` and this code are the source.
"""

from expvid.suites.sample.generate import OWNED_PATHS, SampleDirectoryError, SampleSummary, make_sample
from expvid.suites.sample.layout import TRUTH_FILE
from expvid.suites.sample.truth import is_sample_dir, read_truth

__all__ = [
    "OWNED_PATHS",
    "TRUTH_FILE",
    "SampleDirectoryError",
    "SampleSummary",
    "is_sample_dir",
    "make_sample",
    "read_truth",
]
