"""A progress line on stderr for work spread over workers: done/total, wins, errors, ETA
(`Progress`: one unit per episode, for `eval`; `CampaignProgress`: one per campaign, with the
rounds it played)."""

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

    def counts(self) -> str:
        """What the line reports between the bar and the times."""
        return f"wins {self.wins}"

    def line(self) -> str:
        filled = self.done * 20 // max(1, self.total)
        elapsed = time.monotonic() - self.started
        eta = self.eta_s()
        return (
            f"{self.label} [{'#' * filled}{'.' * (20 - filled)}] {self.done}/{self.total} "
            f"{self.counts()}{f' errors {self.errors}' if self.errors else ''} {elapsed:.0f}s"
            + (f" ETA {eta:.0f}s" if eta is not None and self.done < self.total else "")
        )

    def _count(self, row: dict) -> None:
        self.done += 1
        self.wins += bool(row.get("won"))
        self.errors += "error" in row

    def note(self, text: str) -> None:
        """A line of its own above the bar (on a terminal the bar is redrawn below it)."""
        with self._lock:
            if self.tty:
                print(f"\r\x1b[K{text}", file=self.stream, flush=True)
                if 0 < self.done < self.total:
                    print(self.line(), end="", file=self.stream, flush=True)
            else:
                print(text, file=self.stream, flush=True)

    def update(self, row: dict) -> None:
        with self._lock:
            self._count(row)
            decile = self.done * 10 // max(1, self.total)
            if not self.tty and decile == self._last_decile and self.done < self.total:
                return
            self._last_decile = decile
            end = "" if self.tty and self.done < self.total else "\n"
            print(("\r" if self.tty else "") + self.line(), end=end, file=self.stream, flush=True)


class CampaignProgress(Progress):
    """Campaigns (one job per campaign and mode) done/total, the rounds they played and won,
    errors and ETA. A row is {"rounds": played, "won": rounds won} or {"error": ...}."""

    def __init__(self, total: int, rounds: int, label: str, stream: TextIO | None = None) -> None:
        super().__init__(total, label, stream)
        self.rounds_total = total * rounds
        self.rounds_done = 0

    def _count(self, row: dict) -> None:
        self.done += 1
        self.rounds_done += int(row.get("rounds", 0))
        self.wins += int(row.get("won", 0))
        self.errors += "error" in row

    def counts(self) -> str:
        return f"campaigns, rounds {self.rounds_done}/{self.rounds_total} won {self.wins}"
