"""A flood's refusals are answered spaced out (web/busy_pacing.py): the server answers a bounded
number of them a second, whatever the number of flooders, and goes back to the plain pause when the
flood stops. The last test drives it through the login form of a live server."""

from __future__ import annotations

import time
from itertools import pairwise

from platform_env import Env, LiveServer
from test_signin_fairness import SLOW, _slow_password, strangers_guessing, wait_until

from expvid.platform import create_app
from expvid.platform.web.busy_pacing import RefusalPacer


def test_eight_refusals_at_once_are_answered_after_the_pause_then_a_quarter_second_apart() -> None:
    pacer = RefusalPacer(pause_s=1.0, rate=4.0, longest_s=15.0)
    delays = [pacer.delay() for _ in range(8)]
    assert abs(delays[0] - 1.0) < 0.05
    gaps = [later - earlier for earlier, later in pairwise(delays)]
    assert all(abs(gap - 0.25) < 0.05 for gap in gaps), delays


def test_eighty_refusals_at_once_leave_at_most_rate_a_second_and_none_waits_past_the_longest() -> None:
    pacer = RefusalPacer(pause_s=1.0, rate=4.0, longest_s=15.0)
    asked = [(time.monotonic(), pacer.delay()) for _ in range(80)]
    assert max(delay for _, delay in asked) <= 15.0 + 0.05
    spaced = [at + delay for at, delay in asked if delay < 14.9]
    # 1.0, 1.25, ... 14.75 s: 56 answers a quarter second apart; the rest at the longest wait.
    assert len(spaced) == 56
    assert all(later - earlier >= 0.25 - 0.01 for earlier, later in pairwise(spaced)), spaced


def test_when_the_flood_stops_the_pause_is_back_to_plain_within_the_longest_wait() -> None:
    pacer = RefusalPacer(pause_s=0.1, rate=10.0, longest_s=0.5)
    for _ in range(200):
        pacer.delay()
    time.sleep(0.6)
    assert abs(pacer.delay() - 0.1) < 0.05


class _Recording(RefusalPacer):
    def __init__(self) -> None:
        super().__init__(pause_s=0.2, rate=20.0, longest_s=2.0)
        self.delays: list[float] = []

    def delay(self) -> float:
        delay = super().delay()
        self.delays.append(delay)
        return delay


def test_every_refused_sign_in_of_a_live_server_is_paced(env: Env) -> None:
    _slow_password(env, "alice")
    settings = env.settings.model_copy(update={"proxy_header": "X-Forwarded-For", "passwords": SLOW})
    app = create_app(settings, database=env.database)
    pacer = _Recording()
    app.state.refusal_pacer = pacer
    with LiveServer(app) as live, strangers_guessing(live.url, "alice", clients=10) as answers:
        wait_until(lambda: answers[503] >= 5)
    assert answers[503] >= 5, answers
    assert len(pacer.delays) == answers[503]
    assert min(pacer.delays) >= 0.2 - 0.01
