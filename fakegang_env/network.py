"""The generated network as data: accounts with their hidden role and raw signals, the follow
graph with a follower index kept in sync with edits, and the names of the signals INSPECT shows.

Split from the generator so that the engine, the policies and the playbook pass can use the
network without the code that builds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fakegang_env.traces import Traces

__all__ = ["Account", "Network", "ROLES", "SIGNAL_NAMES", "NUMERIC_SIGNALS"]

ROLES: tuple[str, ...] = (
    "gang",
    "customer",
    "community",
    "meme_page",
    "small_business",
    "superfan",
    "vpn_user",
    "niche_fan",
    "celebrity",
    "ordinary",
)

#: Raw signals INSPECT reveals (besides `visible_follows`), in profile order.
SIGNAL_NAMES: tuple[str, ...] = (
    "follower_count",
    "following_count",
    "post_count",
    "avg_post_hour",
    "account_age_days",
    "photo_reuse_score",
    "bio_template_score",
    "comment_repeat_score",
    "ip_cluster_id",
    "shared_ip_count",
    "name_change_count",
    "mutual_follow_rate",
)

#: The numeric raw signals (everything but the opaque IP label).
NUMERIC_SIGNALS: tuple[str, ...] = tuple(s for s in SIGNAL_NAMES if s != "ip_cluster_id")


@dataclass
class Account:
    """One account with its hidden role and its raw signals (platform totals, not sample counts)."""

    account_id: str
    role: str
    is_gang: bool
    follower_count: int
    following_count: int
    post_count: int
    avg_post_hour: float
    account_age_days: int
    photo_reuse_score: float
    bio_template_score: float
    comment_repeat_score: float
    ip_cluster_id: str
    name_change_count: int
    follows: list[str] = field(default_factory=list)


@dataclass
class Network:
    """A generated network. Keeps a follower index and IP occupancy in sync with edits."""

    task: str
    seed: int
    max_steps: int
    accounts: dict[str, Account]
    gang_ids: list[str]
    starting_ids: list[str]
    reported_id: str = ""
    #: The accounts' shared traces (the pivot's search index); None on hand-made networks
    #: until an episode attaches them.
    traces: Traces | None = field(default=None, repr=False)
    _followers: dict[str, dict[str, None]] = field(default_factory=dict, repr=False)
    _ip_count: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._reindex()

    def _reindex(self) -> None:
        followers: dict[str, dict[str, None]] = {a: {} for a in self.accounts}
        ip_count: dict[str, int] = {}
        for acc in self.accounts.values():
            for f in acc.follows:
                followers[f][acc.account_id] = None
            ip_count[acc.ip_cluster_id] = ip_count.get(acc.ip_cluster_id, 0) + 1
        self._followers = followers
        self._ip_count = ip_count

    def followers_of(self, account_id: str) -> list[str]:
        """Current in-network followers, in a deterministic order."""
        return list(self._followers[account_id])

    def shared_ip_count(self, account_id: str) -> int:
        """Other accounts currently seen on this account's IP."""
        return self._ip_count[self.accounts[account_id].ip_cluster_id] - 1

    def mutual_follow_rate(self, account_id: str) -> float:
        """Share of the account's in-network follows that follow it back."""
        follows = self.accounts[account_id].follows
        if not follows:
            return 0.0
        back = self._followers[account_id]
        return round(sum(1 for f in follows if f in back) / len(follows), 4)

    def signals(self, account_id: str) -> dict:
        """Raw signals of one account as they are now (after any evasion)."""
        a = self.accounts[account_id]
        return {
            "follower_count": a.follower_count,
            "following_count": a.following_count,
            "post_count": a.post_count,
            "avg_post_hour": a.avg_post_hour,
            "account_age_days": a.account_age_days,
            "photo_reuse_score": a.photo_reuse_score,
            "bio_template_score": a.bio_template_score,
            "comment_repeat_score": a.comment_repeat_score,
            "ip_cluster_id": a.ip_cluster_id,
            "shared_ip_count": self.shared_ip_count(account_id),
            "name_change_count": a.name_change_count,
            "mutual_follow_rate": self.mutual_follow_rate(account_id),
        }

    def remove_follow(self, src: str, dst: str) -> None:
        """Drop the edge src -> dst (if present), keeping counts and the index in sync."""
        acc = self.accounts[src]
        if src not in self._followers[dst]:
            return
        acc.follows.remove(dst)
        del self._followers[dst][src]
        acc.following_count = max(len(acc.follows), acc.following_count - 1)
        tgt = self.accounts[dst]
        tgt.follower_count = max(len(self._followers[dst]), tgt.follower_count - 1)

    def set_ip(self, account_id: str, ip: str) -> None:
        """Move an account to another IP label."""
        acc = self.accounts[account_id]
        self._ip_count[acc.ip_cluster_id] -= 1
        acc.ip_cluster_id = ip
        self._ip_count[ip] = self._ip_count.get(ip, 0) + 1

    def ip_labels(self) -> list[str]:
        """IP labels in use, in first-seen order."""
        return [ip for ip, n in self._ip_count.items() if n > 0]

    def copy(self) -> Network:
        """An independent copy (accounts and follow lists duplicated), cheaper than deepcopy."""
        accounts = {
            k: Account(**{**vars(a), "follows": list(a.follows)}) for k, a in self.accounts.items()
        }
        return Network(
            task=self.task,
            seed=self.seed,
            max_steps=self.max_steps,
            accounts=accounts,
            gang_ids=list(self.gang_ids),
            starting_ids=list(self.starting_ids),
            reported_id=self.reported_id,
            traces=None if self.traces is None else self.traces.copy(),
        )
