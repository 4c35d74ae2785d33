"""Synthetic social networks with a hidden ring of fake accounts.

Every network is a pure function of `(task, seed)`: one `random.Random("<task>:<seed>")` drives
all draws, nothing global and nothing on disk. The populations are built so that no single raw
signal separates the ring (each ring trait has innocent look-alikes), while the *combination* of
lockstep traits (creation burst, synchronised posting hour, co-followed customers, dense mutual
follows, a shared proxy pool) around a known member does. See ENVIRONMENT.md, "What a realistic
network looks like".

Populations and the ring trait each one imitates:
  gang            burst ages, synchronised hour, moderately elevated content, proxy pool, dense
                  mutual ring, co-follows the customers, camouflage follows (celebs, random users)
  customer        innocent buyers of followers: followed by most of the ring
  niche_fan       real audience of the customers' niche: co-follows the customers too
  community       friend groups / classmates: dense mutual follows, shared household or campus
                  IPs, sometimes cohort ages
  meme_page, small_business, superfan
                  one high content score each (photo / bio / comment), some a second one
  vpn_user        carrier-NAT / VPN exits shared with strangers, including the ring's proxies
  celebrity       huge follower counts, followed by many
  ordinary        the rest; new accounts are common, and on medium/hard a sign-up surge puts
                  some ordinary accounts within days of the ring's creation burst
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from fakegang_env.tactics import Playbook, resolve_playbook
from fakegang_env.tasks import UnknownTaskError, get_task

__all__ = [
    "Account",
    "Network",
    "GenParams",
    "PARAMS",
    "ROLES",
    "SIGNAL_NAMES",
    "NUMERIC_SIGNALS",
    "UnknownTaskError",
    "generate_network",
    "network_to_dict",
]

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
        )


@dataclass(frozen=True)
class GenParams:
    """Per-task knobs of the generator (sizes of populations, ring tightness, evasion strength)."""

    n_customers: tuple[int, int]
    n_celebs: int
    n_communities: tuple[int, int]
    community_size: tuple[int, int]
    frac_meme: float
    frac_business: float
    frac_superfan: float
    frac_vpn: float
    frac_niche: float  # real fans of the customers' niche: co-follow what the ring co-follows
    signup_wave: tuple[float, int, int]  # (probability, min, max) ordinary sign-ups near the burst
    double_lookalike: float  # share of look-alikes with a second elevated content signal
    ring_pair_p: float  # probability that two members are linked
    ring_recip: float  # probability each direction of a linked pair exists
    customer_follow_p: float
    camo_celebs: tuple[int, int]
    camo_random: tuple[int, int]
    follow_back_p: float  # a camouflage target follows the member back
    gang_content_mean: float
    gang_content_conc: float
    proxy_pool: tuple[int, int]
    vpn_on_proxy: tuple[int, int]
    age_burst: int
    hour_sd: float
    ordinary_follows: tuple[int, int]
    celeb_follow_p: float
    evasion_drop: float
    evasion_rotate: float
    evasion_rename: float
    evasion_hour_shift: tuple[float, float]


PARAMS: dict[str, GenParams] = {
    "easy": GenParams(
        n_customers=(2, 2),
        n_celebs=2,
        n_communities=(1, 1),
        community_size=(5, 7),
        frac_meme=0.04,
        frac_business=0.04,
        frac_superfan=0.04,
        frac_vpn=0.05,
        frac_niche=0.05,
        signup_wave=(0.0, 0, 0),
        double_lookalike=0.0,
        ring_pair_p=0.8,
        ring_recip=0.9,
        customer_follow_p=0.85,
        camo_celebs=(1, 2),
        camo_random=(1, 3),
        follow_back_p=0.25,
        gang_content_mean=0.5,
        gang_content_conc=14.0,
        proxy_pool=(2, 3),
        vpn_on_proxy=(0, 2),
        age_burst=4,
        hour_sd=0.4,
        ordinary_follows=(2, 6),
        celeb_follow_p=0.3,
        evasion_drop=0.0,
        evasion_rotate=0.0,
        evasion_rename=0.0,
        evasion_hour_shift=(0.0, 0.0),
    ),
    "medium": GenParams(
        n_customers=(3, 3),
        n_celebs=4,
        n_communities=(4, 5),
        community_size=(5, 12),
        frac_meme=0.035,
        frac_business=0.035,
        frac_superfan=0.035,
        frac_vpn=0.06,
        frac_niche=0.06,
        signup_wave=(0.75, 6, 10),
        double_lookalike=0.3,
        ring_pair_p=0.7,
        ring_recip=0.85,
        customer_follow_p=0.85,
        camo_celebs=(1, 3),
        camo_random=(4, 10),
        follow_back_p=0.3,
        gang_content_mean=0.4,
        gang_content_conc=12.0,
        proxy_pool=(2, 4),
        vpn_on_proxy=(1, 4),
        age_burst=5,
        hour_sd=0.45,
        ordinary_follows=(3, 10),
        celeb_follow_p=0.25,
        evasion_drop=0.35,
        evasion_rotate=0.4,
        evasion_rename=0.3,
        evasion_hour_shift=(2.0, 5.0),
    ),
    "hard": GenParams(
        n_customers=(4, 4),
        n_celebs=8,
        n_communities=(14, 18),
        community_size=(5, 15),
        frac_meme=0.035,
        frac_business=0.035,
        frac_superfan=0.035,
        frac_vpn=0.06,
        frac_niche=0.03,
        signup_wave=(0.7, 8, 16),
        double_lookalike=0.35,
        ring_pair_p=0.65,
        ring_recip=0.85,
        customer_follow_p=0.8,
        camo_celebs=(2, 4),
        camo_random=(4, 10),
        follow_back_p=0.3,
        gang_content_mean=0.38,
        gang_content_conc=12.0,
        proxy_pool=(3, 5),
        vpn_on_proxy=(1, 5),
        age_burst=6,
        hour_sd=0.5,
        ordinary_follows=(3, 14),
        celeb_follow_p=0.2,
        evasion_drop=0.25,
        evasion_rotate=0.3,
        evasion_rename=0.25,
        evasion_hour_shift=(1.5, 4.0),
    ),
}


class _Ids:
    """Opaque, unique, non-enumerable labels drawn from the episode RNG."""

    def __init__(self, rng: random.Random, prefix: str, bits: int) -> None:
        self.rng, self.prefix, self.bits, self.used = rng, prefix, bits, set()
        self.width = bits // 4

    def new(self) -> str:
        while True:
            label = f"{self.prefix}{self.rng.getrandbits(self.bits):0{self.width}x}"
            if label not in self.used:
                self.used.add(label)
                return label


def _beta(rng: random.Random, mean: float, conc: float) -> float:
    return round(rng.betavariate(mean * conc, (1.0 - mean) * conc), 4)


def _lognorm_int(rng: random.Random, median: float, sigma: float, lo: int = 0) -> int:
    return max(lo, int(rng.lognormvariate(math.log(median), sigma)))


def _ordinary_hour(rng: random.Random) -> float:
    u = rng.random()
    if u < 0.45:
        h = rng.gauss(20.5, 2.2)
    elif u < 0.75:
        h = rng.gauss(13.0, 2.8)
    else:
        h = rng.uniform(0.0, 24.0)
    return round(h % 24.0, 2)


def _ordinary_age(rng: random.Random) -> int:
    if rng.random() < 0.18:  # new sign-ups are common
        return rng.randint(1, 150)
    return min(5000, _lognorm_int(rng, 900, 0.8, lo=1))


def _name_changes(rng: random.Random, weights: tuple[float, ...]) -> int:
    return rng.choices(range(len(weights)), weights=weights)[0]


class _Builder:
    """Holds the RNG and the partial network while generate_network fills it role by role."""

    def __init__(self, task: str, seed: int) -> None:
        self.seed = seed
        self.spec = get_task(task)
        self.p = PARAMS[task]
        self.rng = random.Random(f"{task}:{seed}")
        self.ids = _Ids(self.rng, "u_", 24)
        self.ips = _Ids(self.rng, "ip_", 16)
        self.accounts: list[Account] = []
        self.by_role: dict[str, list[Account]] = {r: [] for r in ROLES}
        self.extra_followers: dict[str, int] = {}
        self.extra_following: dict[str, int] = {}

    # -- accounts -------------------------------------------------------------------------------
    def _base(self, role: str) -> Account:
        rng = self.rng
        acc = Account(
            account_id=self.ids.new(),
            role=role,
            is_gang=False,
            follower_count=0,
            following_count=0,
            post_count=_lognorm_int(rng, 120, 1.1),
            avg_post_hour=_ordinary_hour(rng),
            account_age_days=_ordinary_age(rng),
            photo_reuse_score=_beta(rng, 0.13, 10.0),
            bio_template_score=_beta(rng, 0.14, 9.0),
            comment_repeat_score=_beta(rng, 0.11, 10.0),
            ip_cluster_id="",
            name_change_count=_name_changes(rng, (0.78, 0.14, 0.05, 0.03)),
        )
        self.extra_followers[acc.account_id] = _lognorm_int(rng, 180, 1.2)
        self.extra_following[acc.account_id] = _lognorm_int(rng, 200, 0.9)
        self.accounts.append(acc)
        self.by_role[role].append(acc)
        return acc

    def make_gang(self, size: int) -> None:
        rng, p = self.rng, self.p
        base_age = rng.randint(30, 700)
        self.gang_base_age = base_age
        hour = rng.uniform(0.0, 24.0)
        for _ in range(size):
            a = self._base("gang")
            a.is_gang = True
            a.account_age_days = max(1, base_age + rng.randint(-p.age_burst, p.age_burst))
            a.avg_post_hour = round((hour + rng.gauss(0.0, p.hour_sd)) % 24.0, 2)
            a.photo_reuse_score = _beta(rng, p.gang_content_mean, p.gang_content_conc)
            a.bio_template_score = _beta(rng, p.gang_content_mean, p.gang_content_conc)
            a.comment_repeat_score = _beta(rng, p.gang_content_mean, p.gang_content_conc)
            a.post_count = _lognorm_int(rng, 60, 0.8)
            a.name_change_count = _name_changes(rng, (0.45, 0.35, 0.15, 0.05))
            self.extra_followers[a.account_id] = _lognorm_int(rng, 140, 0.9)
            self.extra_following[a.account_id] = _lognorm_int(rng, 380, 0.7)

    def make_others(self, n_total: int) -> None:
        rng, p = self.rng, self.p
        for _ in range(rng.randint(*p.n_customers)):
            a = self._base("customer")
            a.account_age_days = min(5000, _lognorm_int(rng, 1100, 0.6, lo=60))
            a.bio_template_score = _beta(rng, 0.3, 8.0)
            a.post_count = _lognorm_int(rng, 400, 0.8)
            self.extra_followers[a.account_id] = _lognorm_int(rng, 4000, 1.0)
        for _ in range(p.n_celebs):
            a = self._base("celebrity")
            a.account_age_days = min(5000, _lognorm_int(rng, 2000, 0.4, lo=200))
            a.post_count = _lognorm_int(rng, 2000, 0.7)
            self.extra_followers[a.account_id] = _lognorm_int(rng, 2_000_000, 1.2)
            self.extra_following[a.account_id] = _lognorm_int(rng, 150, 1.0)
        n_comm = rng.randint(*p.n_communities)
        self.communities: list[list[Account]] = []
        for _ in range(n_comm):
            size = rng.randint(*p.community_size)
            members = [self._base("community") for _ in range(size)]
            if rng.random() < 0.5:  # classmates: joined the same term
                age = rng.randint(20, 1500)
                for m in members:
                    m.account_age_days = max(1, age + rng.randint(-25, 25))
            self.communities.append(members)
        n = n_total
        for role, frac, key in (
            ("meme_page", p.frac_meme, "photo_reuse_score"),
            ("small_business", p.frac_business, "bio_template_score"),
            ("superfan", p.frac_superfan, "comment_repeat_score"),
        ):
            for _ in range(max(1, round(frac * n))):
                a = self._base(role)
                setattr(a, key, _beta(rng, 0.62, 8.0))
                if rng.random() < p.double_lookalike:
                    other = rng.choice(
                        [
                            k
                            for k in (
                                "photo_reuse_score",
                                "bio_template_score",
                                "comment_repeat_score",
                            )
                            if k != key
                        ]
                    )
                    setattr(a, other, _beta(rng, 0.42, 8.0))
                if role == "meme_page":
                    a.post_count = _lognorm_int(rng, 900, 0.8)
                    self.extra_followers[a.account_id] = _lognorm_int(rng, 2500, 1.1)
        for _ in range(max(2, round(p.frac_vpn * n))):
            self._base("vpn_user")
        for _ in range(max(2, round(p.frac_niche * n))):
            self._base("niche_fan")
        while len(self.accounts) < n_total:
            self._base("ordinary")
        prob, lo, hi = p.signup_wave
        if rng.random() < prob:  # a sign-up surge the ring registered in, to blend in
            for a in rng.sample(self.by_role["ordinary"], rng.randint(lo, hi)):
                a.account_age_days = max(1, self.gang_base_age + rng.randint(-12, 12))

    # -- IPs ------------------------------------------------------------------------------------
    def assign_ips(self) -> None:
        rng, p = self.rng, self.p
        gang = self.by_role["gang"]
        proxies = [self.ips.new() for _ in range(rng.randint(*p.proxy_pool))]
        for i, g in enumerate(gang):
            g.ip_cluster_id = proxies[i % len(proxies)] if i < len(proxies) else rng.choice(proxies)
        vpn = list(self.by_role["vpn_user"])
        rng.shuffle(vpn)
        for proxy in proxies:  # commercial exit nodes: strangers share the gang's proxies
            for _ in range(rng.randint(*p.vpn_on_proxy)):
                if vpn:
                    vpn.pop().ip_cluster_id = proxy
        self.nat_ips: list[str] = list(proxies)
        while vpn:  # carrier-NAT / VPN exit nodes shared by strangers
            ip = self.ips.new()
            self.nat_ips.append(ip)
            for _ in range(rng.randint(3, 12)):
                if vpn:
                    vpn.pop().ip_cluster_id = ip
        for members in self.communities:
            if rng.random() < 0.4:  # a campus network
                ip = self.ips.new()
                for m in members:
                    if rng.random() < 0.85:
                        m.ip_cluster_id = ip
            else:  # households of 2-5
                order = list(members)
                rng.shuffle(order)
                while order:
                    k = rng.randint(2, 5)
                    ip = self.ips.new()
                    for m in order[:k]:
                        m.ip_cluster_id = ip
                    order = order[k:]
        for a in self.accounts:
            if not a.ip_cluster_id:
                if a.role == "ordinary" and rng.random() < 0.08:  # mobile carrier NAT
                    a.ip_cluster_id = rng.choice(self.nat_ips)
                elif a.role == "ordinary" and rng.random() < 0.12:  # couples / flatmates
                    ip = self.ips.new()
                    a.ip_cluster_id = ip
                    mate = rng.choice(self.by_role["ordinary"])
                    if not mate.ip_cluster_id:
                        mate.ip_cluster_id = ip
                else:
                    a.ip_cluster_id = self.ips.new()

    # -- edges ----------------------------------------------------------------------------------
    def add_edges(self) -> dict[str, dict[str, None]]:
        rng, p = self.rng, self.p
        follows: dict[str, dict[str, None]] = {a.account_id: {} for a in self.accounts}

        def add(src: Account, dst: Account) -> None:
            if src is not dst:
                follows[src.account_id][dst.account_id] = None

        gang = self.by_role["gang"]
        customers = self.by_role["customer"]
        celebs = self.by_role["celebrity"]
        innocents = [a for a in self.accounts if not a.is_gang and a.role != "celebrity"]
        # the ring: dense, mostly reciprocal, always connected through a spanning chain
        order = list(gang)
        rng.shuffle(order)
        for i in range(1, len(order)):
            j = rng.randrange(i)
            add(order[i], order[j])
            add(order[j], order[i])
        for i, g in enumerate(gang):
            for h in gang[i + 1 :]:
                if rng.random() < p.ring_pair_p:
                    if rng.random() < p.ring_recip:
                        add(g, h)
                    if rng.random() < p.ring_recip:
                        add(h, g)
        for g in gang:  # lockstep co-following of customers, and camouflage
            for c in customers:
                if rng.random() < p.customer_follow_p:
                    add(g, c)
            for c in rng.sample(celebs, min(len(celebs), rng.randint(*p.camo_celebs))):
                add(g, c)
            for u in rng.sample(innocents, rng.randint(*p.camo_random)):
                add(g, u)
                if rng.random() < p.follow_back_p:
                    add(u, g)
        for members in self.communities:  # dense mutual friend groups
            for i, a in enumerate(members):
                for b in members[i + 1 :]:
                    if rng.random() < 0.7:
                        if rng.random() < 0.92:
                            add(a, b)
                        if rng.random() < 0.92:
                            add(b, a)
            local = rng.choice(self.by_role["small_business"] or innocents)
            for m in members:
                if rng.random() < 0.6:
                    add(m, local)
        for a in self.by_role["niche_fan"]:  # organic audience of the customers' niche
            for c in customers:
                if rng.random() < 0.85:
                    add(a, c)
            for c in celebs:
                if rng.random() < 0.4:
                    add(a, c)
        non_gang = [a for a in self.accounts if not a.is_gang]
        for a in self.accounts:
            if a.is_gang:
                continue
            for c in celebs:
                if rng.random() < (p.celeb_follow_p * (2.5 if a.role == "superfan" else 1.0)):
                    add(a, c)
            k = rng.randint(*p.ordinary_follows)
            if a.role in ("celebrity", "niche_fan"):  # lurkers and stars follow few others
                k = rng.randint(0, 3)
            for b in rng.sample(non_gang, min(k, len(non_gang))):
                add(a, b)
            if customers and rng.random() < 0.08:
                add(a, rng.choice(customers))
        return follows

    def finish(self, follows: dict[str, dict[str, None]]) -> Network:
        rng = self.rng
        order = list(self.accounts)
        rng.shuffle(order)
        in_deg: dict[str, int] = {a.account_id: 0 for a in order}
        for a in order:
            lst = list(follows[a.account_id])
            rng.shuffle(lst)
            a.follows = lst
            for f in lst:
                in_deg[f] += 1
        for a in order:
            a.following_count = len(a.follows) + self.extra_following[a.account_id]
            a.follower_count = in_deg[a.account_id] + self.extra_followers[a.account_id]
        gang_ids = [a.account_id for a in order if a.is_gang]
        reported = rng.choice(gang_ids)
        starting = [reported]
        pool_roles = ("meme_page", "small_business", "superfan", "vpn_user", "customer")
        lookalikes = [a.account_id for r in pool_roles for a in self.by_role[r]]
        rng.shuffle(lookalikes)
        n_look = min(len(lookalikes), max(2, (self.spec.n_starting - 1) // 2))
        starting += lookalikes[:n_look]
        rest = [a.account_id for a in order if not a.is_gang and a.account_id not in starting]
        starting += rng.sample(rest, self.spec.n_starting - len(starting))
        rng.shuffle(starting)
        return Network(
            task=self.spec.name,
            seed=self.seed,
            max_steps=self.spec.max_steps,
            accounts={a.account_id: a for a in order},
            gang_ids=gang_ids,
            starting_ids=starting,
            reported_id=reported,
        )


def generate_network(task: str, seed: int, playbook: Playbook | str | None = None) -> Network:
    """Build the network of `(task, seed)` under a playbook (default classic); a pure function
    of its inputs. `playbook` may be a `Playbook` or a tactics name (`mixed` draws per seed);
    the playbook is applied by `fakegang_env.playbook` after the classic build."""
    spec = get_task(task)  # raises UnknownTaskError listing the valid tasks
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed}")
    if isinstance(playbook, str):
        playbook = resolve_playbook(spec.name, seed, playbook)  # raises, listing valid names
    elif playbook is not None and not isinstance(playbook, Playbook):
        raise ValueError(f"playbook must be a Playbook or a tactics name, got {playbook!r}")
    b = _Builder(spec.name, seed)
    b.make_gang(b.rng.randint(spec.gang_min, spec.gang_max))
    b.make_others(spec.n_accounts)
    b.assign_ips()
    net = b.finish(b.add_edges())
    if playbook is None or playbook.is_classic:
        return net
    from fakegang_env.playbook import apply_playbook  # it imports this module: keep it lazy

    return apply_playbook(net, playbook)


def network_to_dict(net: Network) -> dict:
    """The network with its hidden truth as a JSON-ready dict (for `fakegang env generate`)."""
    return {
        "task": net.task,
        "seed": net.seed,
        "max_steps": net.max_steps,
        "starting_ids": list(net.starting_ids),
        "gang_ids": list(net.gang_ids),
        "reported_id": net.reported_id,
        "accounts": [
            {
                "account_id": a.account_id,
                "is_gang": a.is_gang,
                "role": a.role,
                **{k: v for k, v in net.signals(a.account_id).items()},
                "follows": list(a.follows),
            }
            for a in net.accounts.values()
        ],
    }
