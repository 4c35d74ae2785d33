"""Account profiles: who is in the network and what each account's raw signals look like.

`Population` draws the ring and every innocent population (see fakegang_env/generator.py for the
roles and the ring trait each one imitates) from the network's one RNG; the draw helpers and the
ordinary profile's parameters are shared with the playbook pass (fakegang_env/playbook.py), which
pulls ring members toward ordinary users. Any change to the order of draws changes every network:
`classic` is pinned bit for bit by tests/environment/test_classic_pinned.py.
"""

from __future__ import annotations

import math
import random

from fakegang_env.gen_params import PARAMS
from fakegang_env.network import ROLES, Account
from fakegang_env.tasks import get_task

__all__ = [
    "LabelMaker",
    "ORDINARY_CONTENT",
    "ORDINARY_RENAMES",
    "Population",
    "beta",
    "lognorm_int",
    "name_changes",
    "ordinary_age",
    "ordinary_hour",
]

#: Ordinary users' content scores: Beta (mean, concentration) per score.
ORDINARY_CONTENT: dict[str, tuple[float, float]] = {
    "photo_reuse_score": (0.13, 10.0),
    "bio_template_score": (0.14, 9.0),
    "comment_repeat_score": (0.11, 10.0),
}
#: Ordinary users' name-change counts: weights of 0, 1, 2, 3 renames.
ORDINARY_RENAMES: tuple[float, ...] = (0.78, 0.14, 0.05, 0.03)


class LabelMaker:
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


def beta(rng: random.Random, mean: float, conc: float) -> float:
    """A score in [0, 1] from a Beta with this mean and concentration, rounded to 4 places."""
    return round(rng.betavariate(mean * conc, (1.0 - mean) * conc), 4)


def lognorm_int(rng: random.Random, median: float, sigma: float, lo: int = 0) -> int:
    """A heavy-tailed count (log-normal around `median`), at least `lo`."""
    return max(lo, int(rng.lognormvariate(math.log(median), sigma)))


def ordinary_hour(rng: random.Random) -> float:
    """An ordinary user's average posting hour: evening or midday peaks, some anywhere."""
    u = rng.random()
    if u < 0.45:
        h = rng.gauss(20.5, 2.2)
    elif u < 0.75:
        h = rng.gauss(13.0, 2.8)
    else:
        h = rng.uniform(0.0, 24.0)
    return round(h % 24.0, 2)


def ordinary_age(rng: random.Random) -> int:
    """An ordinary account's age in days: mostly years old, new sign-ups common."""
    if rng.random() < 0.18:  # new sign-ups are common
        return rng.randint(1, 150)
    return min(5000, lognorm_int(rng, 900, 0.8, lo=1))


def name_changes(rng: random.Random, weights: tuple[float, ...]) -> int:
    """A rename count drawn with `weights` for 0, 1, 2, ... renames."""
    return rng.choices(range(len(weights)), weights=weights)[0]


class Population:
    """The RNG and the accounts drawn so far, role by role; fakegang_env/wiring.py then connects
    them. One RNG for the whole build: the order of draws is the network."""

    def __init__(self, task: str, seed: int) -> None:
        self.seed = seed
        self.spec = get_task(task)
        self.p = PARAMS[task]
        self.rng = random.Random(f"{task}:{seed}")
        self.ids = LabelMaker(self.rng, "u_", 24)
        self.ips = LabelMaker(self.rng, "ip_", 16)
        self.accounts: list[Account] = []
        self.by_role: dict[str, list[Account]] = {r: [] for r in ROLES}
        self.extra_followers: dict[str, int] = {}
        self.extra_following: dict[str, int] = {}
        self.communities: list[list[Account]] = []  # filled by make_others
        self.gang_base_age = 0  # drawn by make_gang

    def add(self, role: str) -> Account:
        rng = self.rng
        acc = Account(
            account_id=self.ids.new(),
            role=role,
            is_gang=False,
            follower_count=0,
            following_count=0,
            post_count=lognorm_int(rng, 120, 1.1),
            avg_post_hour=ordinary_hour(rng),
            account_age_days=ordinary_age(rng),
            photo_reuse_score=beta(rng, *ORDINARY_CONTENT["photo_reuse_score"]),
            bio_template_score=beta(rng, *ORDINARY_CONTENT["bio_template_score"]),
            comment_repeat_score=beta(rng, *ORDINARY_CONTENT["comment_repeat_score"]),
            ip_cluster_id="",
            name_change_count=name_changes(rng, ORDINARY_RENAMES),
        )
        self.extra_followers[acc.account_id] = lognorm_int(rng, 180, 1.2)
        self.extra_following[acc.account_id] = lognorm_int(rng, 200, 0.9)
        self.accounts.append(acc)
        self.by_role[role].append(acc)
        return acc

    def make_gang(self, size: int) -> None:
        rng, p = self.rng, self.p
        base_age = rng.randint(30, 700)
        self.gang_base_age = base_age
        hour = rng.uniform(0.0, 24.0)
        for _ in range(size):
            a = self.add("gang")
            a.is_gang = True
            a.account_age_days = max(1, base_age + rng.randint(-p.age_burst, p.age_burst))
            a.avg_post_hour = round((hour + rng.gauss(0.0, p.hour_sd)) % 24.0, 2)
            a.photo_reuse_score = beta(rng, p.gang_content_mean, p.gang_content_conc)
            a.bio_template_score = beta(rng, p.gang_content_mean, p.gang_content_conc)
            a.comment_repeat_score = beta(rng, p.gang_content_mean, p.gang_content_conc)
            a.post_count = lognorm_int(rng, 60, 0.8)
            a.name_change_count = name_changes(rng, (0.45, 0.35, 0.15, 0.05))
            self.extra_followers[a.account_id] = lognorm_int(rng, 140, 0.9)
            self.extra_following[a.account_id] = lognorm_int(rng, 380, 0.7)

    def make_others(self, n_total: int) -> None:
        rng, p = self.rng, self.p
        for _ in range(rng.randint(*p.n_customers)):
            a = self.add("customer")
            a.account_age_days = min(5000, lognorm_int(rng, 1100, 0.6, lo=60))
            a.bio_template_score = beta(rng, 0.3, 8.0)
            a.post_count = lognorm_int(rng, 400, 0.8)
            self.extra_followers[a.account_id] = lognorm_int(rng, 4000, 1.0)
        for _ in range(p.n_celebs):
            a = self.add("celebrity")
            a.account_age_days = min(5000, lognorm_int(rng, 2000, 0.4, lo=200))
            a.post_count = lognorm_int(rng, 2000, 0.7)
            self.extra_followers[a.account_id] = lognorm_int(rng, 2_000_000, 1.2)
            self.extra_following[a.account_id] = lognorm_int(rng, 150, 1.0)
        n_comm = rng.randint(*p.n_communities)
        self.communities = []
        for _ in range(n_comm):
            size = rng.randint(*p.community_size)
            members = [self.add("community") for _ in range(size)]
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
                a = self.add(role)
                setattr(a, key, beta(rng, 0.62, 8.0))
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
                    setattr(a, other, beta(rng, 0.42, 8.0))
                if role == "meme_page":
                    a.post_count = lognorm_int(rng, 900, 0.8)
                    self.extra_followers[a.account_id] = lognorm_int(rng, 2500, 1.1)
        for _ in range(max(2, round(p.frac_vpn * n))):
            self.add("vpn_user")
        for _ in range(max(2, round(p.frac_niche * n))):
            self.add("niche_fan")
        while len(self.accounts) < n_total:
            self.add("ordinary")
        prob, lo, hi = p.signup_wave
        if rng.random() < prob:  # a sign-up surge the ring registered in, to blend in
            for a in rng.sample(self.by_role["ordinary"], rng.randint(lo, hi)):
                a.account_age_days = max(1, self.gang_base_age + rng.randint(-12, 12))
