"""One campaign in one mode as a unit of work that can run anywhere: this process, a worker
process, or a Ray task on another machine (`fakegang campaign --concurrency/--backend`).

`play_campaign_job(job, start)` needs nothing from the driver's filesystem: the starting memory
arrives as `start` (the bytes of a `--from-db` copy, or None for a fresh memory), the campaign
plays and learns round by round in a shard of its own (fakegang/runs/shards.py), against the
shared `--env-url` or the server embedded in the worker process, and the shard goes back as
bytes inside the returned `CampaignOutcome`. Its run id and thread ids derive from the
invocation's `tag`, so a job played again (a retried worker) records the same threads and the
driver's merge replaces rather than duplicates them.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakegang.runs.worker import (
    SHARD_DIR_PREFIX,
    apply_settings,
    embedded_url,
    kill_hook,
    worker_identity,
)


@dataclass(frozen=True)
class CampaignJob:
    """What a worker needs to play one campaign in one mode (picklable, no open handles)."""

    tag: str  # the invocation: run id and thread ids derive from it
    task: str
    tactics: str
    campaign: int
    rounds: int
    model: str
    mode: str
    alpha_rule: str = "credit"
    env_url: str | None = None  # None: the server embedded in the worker process
    keep_shard: bool = False  # return the shard (the driver keeps it: `--db`)
    env: tuple[tuple[str, str], ...] = ()  # the driver's FAKEGANG_* settings

    @property
    def key(self) -> tuple[int, str]:
        return (self.campaign, self.mode)

    @property
    def run_id(self) -> str:
        from fakegang.runs.campaign import campaign_run_id

        return campaign_run_id(self.tag, self.mode, self.campaign)


@dataclass
class CampaignOutcome:
    key: tuple[int, str]
    result: dict[str, Any]  # play_campaign's dict: per-round rows
    shard: bytes | None = None  # None for the oracle, or when the driver keeps no database
    worker: dict[str, Any] = field(default_factory=dict)
    wall_s: float = 0.0


def play_campaign_job(
    job: CampaignJob, start: bytes | None, progress: Callable[[str], None] | None = None
) -> CampaignOutcome:
    """Play `job` in a fresh shard (a copy of `start` when given); return its rows and shard.
    `progress` gets a line per round (only where the driver can see it: in its own process)."""
    from fakegang.runs.campaign import play_campaign
    from fakegang.runs.shards import shard_bytes, write_shard

    apply_settings(job.env)
    who = worker_identity()
    started = time.time()
    if job.mode == "oracle":  # no graph, no memory: the environment's oracle policy
        result = play_campaign(
            job.task,
            job.tactics,
            job.campaign,
            job.rounds,
            job.model,
            job.mode,
            tag=job.tag,
            progress=progress,
        )
        return CampaignOutcome(job.key, result, None, who, round(time.time() - started, 3))
    tmp = Path(tempfile.mkdtemp(prefix=f"{SHARD_DIR_PREFIX}campaign-{job.tag}-"))
    shard = tmp / "shard.sqlite"
    try:
        if start is not None:
            write_shard(start, shard)
        hook = kill_hook()
        result = play_campaign(
            job.task,
            job.tactics,
            job.campaign,
            job.rounds,
            job.model,
            job.mode,
            str(shard),
            env_url=job.env_url or embedded_url(),
            alpha_rule=job.alpha_rule,
            progress=progress,
            tag=job.tag,
            callbacks=[hook] if hook is not None else None,
        )
        data = shard_bytes(shard) if job.keep_shard else None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return CampaignOutcome(job.key, result, data, who, round(time.time() - started, 3))
