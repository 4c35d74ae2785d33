"""How much of the machine other processes are using right now, to size llama.cpp's threads.

Why: llama.cpp's threads wait for each other at every matrix product by spinning. When another
process holds one of the cores, one of our threads is descheduled at each of those barriers and
the other spins until it comes back: a call that takes about a second on a quiet 2-core machine
took 10-85 s with one core kept busy. One thread on the free core is about half the quiet speed
instead. So before each local call the model asks how many cores the rest of the machine used
since its previous call and uses only the ones left.

Measured from Linux's /proc: the busy time of all CPUs (/proc/stat) minus this process's own
CPU time (/proc/self/stat: our llama threads, the embedded environment server thread). Elsewhere
(no /proc) `other_cores` returns None and the caller keeps its configured threads.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

#: Below this window (s) a measure is too noisy to act on: the previous choice stays.
MIN_WINDOW_S = 0.2


def _ticks_per_s() -> int:
    try:
        return os.sysconf("SC_CLK_TCK")
    except (AttributeError, ValueError, OSError):
        return 100


def _system_busy_s() -> float | None:
    """Seconds of CPU time all cores spent busy since boot (/proc/stat `cpu` line)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / _ticks_per_s()


def _own_cpu_s() -> float:
    """CPU seconds this process (all its threads) has used."""
    return time.process_time()


def available_cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class CpuShare:
    """Cores used by other processes between two looks (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = self._sample()

    @staticmethod
    def _sample() -> tuple[float, float, float] | None:
        busy = _system_busy_s()
        if busy is None:
            return None
        return time.monotonic(), busy, _own_cpu_s()

    def other_cores(self) -> float | None:
        """Cores the rest of the machine kept busy on average since the previous look (None:
        unknown, or the window is too short to tell)."""
        with self._lock:
            now = self._sample()
            last = self._last
            if now is None or last is None:
                return None
            wall = now[0] - last[0]
            if wall < MIN_WINDOW_S:
                return None
            self._last = now
            others = (now[1] - last[1]) - (now[2] - last[2])
            return max(0.0, others / wall)


def threads_for(max_threads: int, other_cores: float | None, cores: int) -> int:
    """Threads to use: at most `max_threads`, at most the cores the others leave free (rounded
    to the nearest whole core, at least 1); `max_threads` when the load is unknown."""
    if other_cores is None:
        return max_threads
    free = round(cores - other_cores)
    return max(1, min(max_threads, free))
