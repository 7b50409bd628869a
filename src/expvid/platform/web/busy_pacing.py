"""When the refusals of a flood are answered: spaced out, so that a flood costs a bounded number of
requests a second whatever its size.

Why: a sign-in the hashing lanes have no room for is answered 503 after a pause, so that a client
looping on refusals does not loop at full speed. With a fixed pause of 1 s, 80 flooders still made
about 10 refusals a second, each a form fetched and a form posted and answered: some 20 requests a
second of Python work on the server's event loop, taken from the reviewers' saves. Here refusals
leave at most `rate` a second, in the order they came, each after at least `pause_s` and at most
`longest_s`: eight flooders are answered after 1 s as before; eighty wait their turn, and the
server answers a few refusals a second instead of one per flooder. A waiting refusal holds only
its connection (an asyncio sleep), no thread, no database work.
"""

from __future__ import annotations

import threading
import time


class RefusalPacer:
    """Hands out, for each refused sign-in, how long to wait before answering it."""

    def __init__(self, *, pause_s: float = 1.0, rate: float = 4.0, longest_s: float = 15.0) -> None:
        self.pause_s = pause_s
        self.spacing_s = 1.0 / rate
        self.longest_s = longest_s
        self._next_free = 0.0
        self._lock = threading.Lock()

    def delay(self) -> float:
        """Seconds to wait before answering this refusal: at least `pause_s`, after the previous
        refusal's answer by `1 / rate`, at most `longest_s` (a flood larger than the pacer can space
        is answered every `longest_s` per client, still far below one loop a second)."""
        now = time.monotonic()
        with self._lock:
            at = max(now + self.pause_s, self._next_free)
            at = min(at, now + self.longest_s)
            # Never booked beyond `longest_s` ahead: when a flood stops, the pause is back to
            # `pause_s` within `longest_s`.
            self._next_free = min(max(self._next_free, at) + self.spacing_s, now + self.longest_s)
        return at - now
