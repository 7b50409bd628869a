"""`minimal_patterns` selects exactly the needed files, through huggingface_hub's own filter."""

from __future__ import annotations

from huggingface_hub.utils import filter_repo_objects
from hypothesis import given, settings
from hypothesis import strategies as st

from expvid.hub.patterns import minimal_patterns

_segment = st.sampled_from(["a", "b", "level_1", "clip[1]", "x*y", "q?", "55531"])
_paths = st.lists(
    st.lists(_segment, min_size=1, max_size=4).map("/".join), min_size=1, max_size=40, unique=True
)


def _files_only(paths: list[str]) -> list[str]:
    """A path cannot be both a file and a folder in a repo."""
    return [p for p in paths if not any(other.startswith(p + "/") for other in paths)]


@settings(max_examples=150, deadline=None)
@given(_paths, st.data())
def test_patterns_select_exactly_the_needed_files(paths: list[str], data: st.DataObject) -> None:
    available = _files_only(paths)
    needed = data.draw(st.sets(st.sampled_from(available)))
    patterns = minimal_patterns(needed, available)
    selected = set(filter_repo_objects(available, allow_patterns=patterns)) if patterns else set()
    assert selected == needed


def test_whole_folders_collapse_and_partial_ones_stay_exact() -> None:
    available = [f"videos/level_1/{v}/clip_{c}.mp4" for v in ("1", "2") for c in range(3)] + [
        "videos/level_3/1_.mp4"
    ]
    needed = [p for p in available if "/1/" in p] + ["videos/level_1/2/clip_0.mp4"]
    assert minimal_patterns(needed, available) == ["videos/level_1/1/*", "videos/level_1/2/clip_0.mp4"]
    assert minimal_patterns(available, available) == ["videos/*"]
