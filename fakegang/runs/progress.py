"""A progress line on stderr for work spread over workers: done/total, wins, errors, ETA."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


class Progress:
    """Redrawn in place on a terminal; elsewhere (logs, CI) a line per ~10 % of the work."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None) -> None:
        self.total, self.label = total, label
        self.stream = stream or sys.stderr
        self.done = self.wins = self.errors = 0
        self.started = time.monotonic()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._lock = threading.Lock()
        self._last_decile = -1

    def eta_s(self) -> float | None:
        """Seconds left at the mean pace so far (None before the first result)."""
        if not self.done:
            return None
        elapsed = time.monotonic() - self.started
        return elapsed / self.done * (self.total - self.done)

    def line(self) -> str:
        filled = self.done * 20 // max(1, self.total)
        elapsed = time.monotonic() - self.started
        eta = self.eta_s()
        return (
            f"{self.label} [{'#' * filled}{'.' * (20 - filled)}] {self.done}/{self.total} "
            f"wins {self.wins}{f' errors {self.errors}' if self.errors else ''} "
            f"{elapsed:.0f}s"
            + (f" ETA {eta:.0f}s" if eta is not None and self.done < self.total else "")
        )

    def update(self, row: dict) -> None:
        with self._lock:
            self.done += 1
            self.wins += bool(row.get("won"))
            self.errors += "error" in row
            decile = self.done * 10 // max(1, self.total)
            if not self.tty and decile == self._last_decile and self.done < self.total:
                return
            self._last_decile = decile
            end = "" if self.tty and self.done < self.total else "\n"
            print(("\r" if self.tty else "") + self.line(), end=end, file=self.stream, flush=True)
