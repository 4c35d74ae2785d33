"""A simple evidence-combining investigator, used only to check that the ring is findable.

Not a built-in policy and not the project's agent: a ~100-line proof that lockstep evidence
(creation burst, posting hour, co-follows, mutual follows, content) around the reported member
wins within the budget. `bench/experiments/env_calibration.py` reports its win rate next to the
baselines.
"""

from __future__ import annotations

import statistics

CONTENT = ("photo_reuse_score", "bio_template_score", "comment_repeat_score")


def _hour_diff(a: float, b: float) -> float:
    d = abs(a - b) % 24.0
    return min(d, 24.0 - d)


class EvidenceProbe:
    """Find the reported member among the leads, then grow the ring by lockstep evidence."""

    def __init__(self, evasion_steps: tuple[int, ...] = ()) -> None:
        self.evasion_steps = evasion_steps
        self.members: list[str] = []
        self.rejected: set[str] = set()
        self.seed_id: str | None = None
        self.investigated = False

    def _epoch(self, step: int) -> int:
        return sum(1 for s in self.evasion_steps if step >= s)

    def _seed_score(self, p: dict) -> float:
        c = sorted(p[k] for k in CONTENT)
        return c[0] + c[1] + p["mutual_follow_rate"]

    def _is_member(self, p: dict, prof: dict[str, dict], followers: dict[str, int]) -> bool:
        ref = [prof[m] for m in self.members]
        age = statistics.median(r["account_age_days"] for r in ref)
        score = 0.0
        if abs(p["account_age_days"] - age) <= 14:
            score += 2
        same = [
            r
            for r in ref
            if self._epoch(r["inspected_at_step"]) == self._epoch(p["inspected_at_step"])
        ]
        if same:
            hours = [r["avg_post_hour"] for r in same]
            if min(_hour_diff(p["avg_post_hour"], h) for h in hours) <= 1.2:
                score += 1
        mset = set(self.members)
        if sum(1 for f in p["visible_follows"] if f in mset) >= 2:
            score += 1
        if followers.get(p["account_id"], 0) >= 2:
            score += 1
        if statistics.mean(p[k] for k in CONTENT) >= 0.25:
            score += 1
        if any(p["ip_cluster_id"] == r["ip_cluster_id"] for r in ref):
            score += 0.5
        return score >= 4

    def act(self, obs: dict) -> tuple[str, str | None]:
        prof = {p["account_id"]: p for p in obs["visible_accounts"]}
        left = obs["steps_remaining"]
        flagged = set(obs["flagged_ids"])
        if self.seed_id is None:
            for lead in self._leads:
                if lead not in prof:
                    return ("inspect", lead)
            self.seed_id = max(self._leads, key=lambda a: self._seed_score(prof[a]))
            self.members.append(self.seed_id)
        for m in self.members:
            if m not in flagged:
                return ("flag", m)
        # judge freshly inspected accounts
        followed_by = self._followed_by(prof)
        for aid, p in prof.items():
            if aid in self.members or aid in self.rejected:
                continue
            if self._is_member(p, prof, followed_by):
                self.members.append(aid)
                return ("flag", aid)
            self.rejected.add(aid)
        if left <= 1:
            return ("submit", None)
        cands = [(n, aid) for aid, n in followed_by.items() if aid not in prof and n >= 1]
        if cands:
            cands.sort(key=lambda t: -t[0])
            return ("inspect", cands[0][1])
        if not self.investigated and left >= 3:
            self.investigated = True
            return ("investigate_network", self.seed_id)
        return ("submit", None)

    def _followed_by(self, prof: dict[str, dict]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for m in self.members:
            for f in prof[m]["visible_follows"]:
                counts[f] = counts.get(f, 0) + 1
        return counts

    def start(self, obs: dict) -> None:
        self._leads = list(obs["visible_account_ids"])


def run_probe(task: str, seed: int) -> dict:
    from fakegang_env.engine import Episode

    ep = Episode(task, seed)
    probe = EvidenceProbe(ep.task_spec.evasion_steps)
    obs = ep.observation()
    probe.start(obs)
    for _ in range(2000):
        if ep.done:
            break
        obs = ep.step(*probe.act(obs))
    if not ep.done:
        ep.step("submit", None)
    g = ep.grader()
    assert g is not None
    return {**g, "grader_score": g["score"]}
