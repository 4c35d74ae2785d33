"""Graph construction: connects a drawn `Population` into a `Network`.

IP labels, follow edges, then the final shuffle, platform totals and starting leads, each drawn
from the population's one RNG in this fixed order (the order of draws is the network: `classic`
is pinned bit for bit by tests/environment/test_classic_pinned.py).
"""

from __future__ import annotations

from fakegang_env.network import Account, Network
from fakegang_env.profiles import Population

__all__ = ["add_edges", "assign_ips", "finish"]


def assign_ips(pop: Population) -> None:
    """Give every account an IP label: the ring's proxy pool (shared with VPN strangers),
    carrier NAT exits, campus networks and households, and private lines for the rest."""
    rng, p = pop.rng, pop.p
    gang = pop.by_role["gang"]
    proxies = [pop.ips.new() for _ in range(rng.randint(*p.proxy_pool))]
    for i, g in enumerate(gang):
        g.ip_cluster_id = proxies[i % len(proxies)] if i < len(proxies) else rng.choice(proxies)
    vpn = list(pop.by_role["vpn_user"])
    rng.shuffle(vpn)
    for proxy in proxies:  # commercial exit nodes: strangers share the gang's proxies
        for _ in range(rng.randint(*p.vpn_on_proxy)):
            if vpn:
                vpn.pop().ip_cluster_id = proxy
    nat_ips: list[str] = list(proxies)
    while vpn:  # carrier-NAT / VPN exit nodes shared by strangers
        ip = pop.ips.new()
        nat_ips.append(ip)
        for _ in range(rng.randint(3, 12)):
            if vpn:
                vpn.pop().ip_cluster_id = ip
    for members in pop.communities:
        if rng.random() < 0.4:  # a campus network
            ip = pop.ips.new()
            for m in members:
                if rng.random() < 0.85:
                    m.ip_cluster_id = ip
        else:  # households of 2-5
            order = list(members)
            rng.shuffle(order)
            while order:
                k = rng.randint(2, 5)
                ip = pop.ips.new()
                for m in order[:k]:
                    m.ip_cluster_id = ip
                order = order[k:]
    for a in pop.accounts:
        if not a.ip_cluster_id:
            if a.role == "ordinary" and rng.random() < 0.08:  # mobile carrier NAT
                a.ip_cluster_id = rng.choice(nat_ips)
            elif a.role == "ordinary" and rng.random() < 0.12:  # couples / flatmates
                ip = pop.ips.new()
                a.ip_cluster_id = ip
                mate = rng.choice(pop.by_role["ordinary"])
                if not mate.ip_cluster_id:
                    mate.ip_cluster_id = ip
            else:
                a.ip_cluster_id = pop.ips.new()


def add_edges(pop: Population) -> dict[str, dict[str, None]]:
    """The follow graph (source -> ordered set of targets): the dense ring, its co-follows and
    camouflage, friend groups, the niche audience and everyone's ordinary follows."""
    rng, p = pop.rng, pop.p
    follows: dict[str, dict[str, None]] = {a.account_id: {} for a in pop.accounts}

    def add(src: Account, dst: Account) -> None:
        if src is not dst:
            follows[src.account_id][dst.account_id] = None

    gang = pop.by_role["gang"]
    customers = pop.by_role["customer"]
    celebs = pop.by_role["celebrity"]
    innocents = [a for a in pop.accounts if not a.is_gang and a.role != "celebrity"]
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
    for members in pop.communities:  # dense mutual friend groups
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                if rng.random() < 0.7:
                    if rng.random() < 0.92:
                        add(a, b)
                    if rng.random() < 0.92:
                        add(b, a)
        local = rng.choice(pop.by_role["small_business"] or innocents)
        for m in members:
            if rng.random() < 0.6:
                add(m, local)
    for a in pop.by_role["niche_fan"]:  # organic audience of the customers' niche
        for c in customers:
            if rng.random() < 0.85:
                add(a, c)
        for c in celebs:
            if rng.random() < 0.4:
                add(a, c)
    non_gang = [a for a in pop.accounts if not a.is_gang]
    for a in pop.accounts:
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


def finish(pop: Population, follows: dict[str, dict[str, None]]) -> Network:
    """Shuffle into the final order, set the platform totals, pick the reported member and the
    starting leads (the member, look-alikes and ordinary accounts)."""
    rng = pop.rng
    order = list(pop.accounts)
    rng.shuffle(order)
    in_deg: dict[str, int] = {a.account_id: 0 for a in order}
    for a in order:
        lst = list(follows[a.account_id])
        rng.shuffle(lst)
        a.follows = lst
        for f in lst:
            in_deg[f] += 1
    for a in order:
        a.following_count = len(a.follows) + pop.extra_following[a.account_id]
        a.follower_count = in_deg[a.account_id] + pop.extra_followers[a.account_id]
    gang_ids = [a.account_id for a in order if a.is_gang]
    reported = rng.choice(gang_ids)
    starting = [reported]
    pool_roles = ("meme_page", "small_business", "superfan", "vpn_user", "customer")
    lookalikes = [a.account_id for r in pool_roles for a in pop.by_role[r]]
    rng.shuffle(lookalikes)
    n_look = min(len(lookalikes), max(2, (pop.spec.n_starting - 1) // 2))
    starting += lookalikes[:n_look]
    rest = [a.account_id for a in order if not a.is_gang and a.account_id not in starting]
    starting += rng.sample(rest, pop.spec.n_starting - len(starting))
    rng.shuffle(starting)
    return Network(
        task=pop.spec.name,
        seed=pop.seed,
        max_steps=pop.spec.max_steps,
        accounts={a.account_id: a for a in order},
        gang_ids=gang_ids,
        starting_ids=starting,
        reported_id=reported,
    )
