"""The newcomer's lane: an account nobody attacks, signing in from an address never seen, is not
made to wait behind strangers, neither for the database nor for a hash; and a flood the `other`
lane cannot take is refused without any database work. (How long the newcomer waits under 8 and
80 flooders is measured in benchmarks/platform_flood.py.)"""

from __future__ import annotations

import threading
import time
from typing import Any

from platform_env import Env, LiveServer, password_of
from test_signin_fairness import SLOW, _login, _slow_password, strangers_guessing, wait_until

from expvid.platform import create_app
from expvid.platform.config import PasswordPolicy
from expvid.platform.security.hashing import CLEAN, OTHER, HashPool, Ticket
from expvid.platform.security.passwords import Passwords
from expvid.platform.security.signin_gate import CLEAN as CLEAN_KIND
from expvid.platform.security.signin_gate import SUSPECT, SignInGate
from expvid.platform.security.throttle import reserve_attempt


def test_a_newcomer_signs_in_in_the_clean_lanes_while_strangers_flood_another_account(env: Env) -> None:
    _slow_password(env, "bob")
    settings = env.settings.model_copy(update={"proxy_header": "X-Forwarded-For", "passwords": SLOW})
    app = create_app(settings, database=env.database)
    pool: HashPool = app.state.hashes
    gate: SignInGate = app.state.signin_gate
    with LiveServer(app) as live, strangers_guessing(live.url, "alice", clients=12) as answers:
        # the strangers' lane is full, and a suspect found it full before any database work
        wait_until(lambda: answers[503] >= 3 and gate.refused_early >= 1)
        assert answers[503] >= 3 and gate.refused_early >= 1, (answers, gate.refused_early)
        clean_steps, clean_hashes = gate.steps[CLEAN_KIND], pool.done_by_lane[CLEAN]
        status, seconds, _ = _login(live.url, "bob", password_of("bob"), "203.0.113.77")  # never seen
        newcomer_steps = gate.steps[CLEAN_KIND] - clean_steps
        newcomer_hashes = pool.done_by_lane[CLEAN] - clean_hashes
    assert status == 303, answers
    # Its database work ran on the newcomers' thread (look, reserve, finish), its hash in `clean`.
    assert newcomer_steps >= 3 and newcomer_hashes >= 1
    # Strangers at an account that failed are suspects; those the `other` lane had no room for
    # were refused before any database work: fewer attempts reached the database than were made.
    # (Every stranger's answer is in once the threads are joined; the newcomer's attempt is the one
    # clean attempt that is not among the strangers' answers.)
    answered = sum(answers.values())
    assert gate.attempts[SUSPECT] >= 1 and pool.shed_by_lane[OTHER] >= 3
    strangers_at_the_database = gate.attempts[SUSPECT] + gate.attempts[CLEAN_KIND] - 1
    assert strangers_at_the_database + gate.refused_early <= answered, (gate.attempts, answers)
    assert strangers_at_the_database < answered, (gate.attempts, gate.turned_away, answers)
    assert seconds < 30  # generous: a busy 2-core machine; the benchmark measures the real figure


def test_a_clean_attempt_never_waits_out_a_strangers_rest() -> None:
    """After a stranger's hash of 1 s the shared slot rests 9 s (share 0.5, a fifth for `other`). A
    newcomer's attempt arriving then, while the clean thread is still busy for a moment, waits for
    the clean thread, not for the end of the shared slot's rest: a resting slot holds no attempt."""
    pool = HashPool(Passwords(PasswordPolicy(time_cost=1, memory_kib=8, parallelism=1)), share=0.5)
    ran: dict[str, Any] = {}

    def newcomer() -> None:
        ran["thread"], ran["started"] = threading.current_thread().name, time.monotonic()

    try:
        started = time.monotonic()
        stranger = pool._enqueue(pool.admit(OTHER, "192.0.2.1", "alice"), lambda: time.sleep(1.0))
        while pool.running < 1:
            time.sleep(0.005)
        time.sleep(max(0.0, 0.7 - (time.monotonic() - started)))
        # An earlier newcomer keeps the clean thread busy until about 1.3 s (then it rests 0.6 s).
        pool._enqueue(pool.admit(CLEAN, "203.0.113.1", "carol"), lambda: time.sleep(0.6))
        while pool.running < 2:
            time.sleep(0.005)
        stranger.result(timeout=30)
        asked = time.monotonic()
        ticket: Ticket = pool.admit(CLEAN, "203.0.113.2", "newcomer")
        pool._enqueue(ticket, newcomer).result(timeout=30)
    finally:
        pool.close()
    # The clean thread took it after its own rest (about 0.9 s), not the slot after its 9 s.
    assert ran["thread"] == "argon2-clean" and ran["started"] - asked < 2.0, (ran, ran["started"] - asked)


def test_a_restarted_server_knows_the_failures_before_it_started(env: Env) -> None:
    """A flood's failures are in the database; a new server process (a restart, another worker)
    reads them at its first sign-in, so the flood's next attempts are suspects at once, before any
    of them fails again here (until then, each cost the database a read and a write)."""
    with env.database.write() as db:
        for n in range(3):
            reserve_attempt(db, env.settings.throttle, username="alice", ip=f"203.0.113.{n + 1}")
    app = create_app(
        env.settings.model_copy(update={"proxy_header": "X-Forwarded-For"}), database=env.database
    )
    gate: SignInGate = app.state.signin_gate
    assert gate.kind_of(False, "alice", "192.0.2.200") == CLEAN_KIND  # nothing read yet
    with LiveServer(app) as live:
        assert _login(live.url, "bob", password_of("bob"), "192.0.2.100")[0] == 303
        assert gate.kind_of(False, "alice", "192.0.2.200") == SUSPECT  # the account was guessed at
        assert gate.kind_of(False, "carol", "203.0.113.2") == SUSPECT  # the source guessed
        assert gate.kind_of(False, "carol", "192.0.2.201") == CLEAN_KIND
