"""20 concurrent reviewers, 8 decisions each (two of them sent twice at once from two tabs): every
acknowledged save is stored exactly once.

A fixed amount of work, not a fixed time, so the expectations hold on a busy 2-core CI machine. The
full version (10,000 items, one minute, throughput and latencies) is `benchmarks/platform_load.py`.
"""

from __future__ import annotations

from pathlib import Path

from platform_env import Env, add_users, password_of

from expvid.platform import create_app
from expvid.platform.loadtest import run_load, verify, write_synthetic_candidates
from expvid.platform.services.audit import chain_breaks
from expvid.platform.services.importer import import_candidates
from expvid.platform.testing import LiveServer

REVIEWERS = 20
SAVES_EACH = 8
RACE_EVERY = 4


def test_concurrent_reviewers_lose_and_duplicate_nothing(env: Env, tmp_path: Path) -> None:
    clip = env.candidates / "videos" / "level_1" / "E1" / "clip_m.mp4"
    names = {f"load{i:02d}": ("annotator", ["Biology"]) for i in range(REVIEWERS)}
    add_users(env.database, names)
    report = import_candidates(env.database, write_synthetic_candidates(tmp_path / "load", 200, clip))
    assert report.assignment is not None and report.assignment.items_fully_assigned == 200
    with LiveServer(create_app(env.settings, database=env.database)) as live:
        result = run_load(
            live.url,
            [(n, password_of(n)) for n in names],
            duration_s=240.0,  # a cap only: each reviewer stops after SAVES_EACH decisions
            race_every=RACE_EVERY,
            saves_each=SAVES_EACH,
        )
    assert result.errors == [], result.summary()
    races = [s for s in result.saves if s.race]
    # every reviewer made its decisions: each race is two posts of which exactly one is acknowledged
    assert len(races) == 2 * REVIEWERS * (SAVES_EACH // RACE_EVERY), result.summary()
    assert len(result.acknowledged) == REVIEWERS * SAVES_EACH, result.summary()
    checked = verify(env.database, result)
    assert checked.lost == [] and checked.duplicated == []
    # Of two tabs saving from the same decision version, never both were acknowledged.
    by_base: dict[tuple[str, int, int], list[int]] = {}
    for save in races:
        by_base.setdefault((save.reviewer, save.item_id, save.base_version), []).append(save.status)
    assert all(statuses.count(200) <= 1 for statuses in by_base.values())
    assert any(sorted(statuses) == [200, 409] for statuses in by_base.values())
    # Twenty writers at once, and the audit trail's hash chain still follows the ids.
    with env.database.read() as db:
        assert chain_breaks(db) == []
