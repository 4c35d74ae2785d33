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

The build is split by job: fakegang_env/network.py (the data), gen_params.py (per-task knobs),
profiles.py (who is in the network), wiring.py (IPs, follows, leads) and playbook.py (a ring's
tactics, applied after the classic build). The names below are re-exported from here.
"""

from __future__ import annotations

from fakegang_env.gen_params import PARAMS, GenParams
from fakegang_env.network import NUMERIC_SIGNALS, ROLES, SIGNAL_NAMES, Account, Network
from fakegang_env.playbook import apply_playbook
from fakegang_env.profiles import Population
from fakegang_env.tactics import CLASSIC, Playbook, resolve_playbook
from fakegang_env.tasks import UnknownTaskError, get_task
from fakegang_env.traces import build_traces
from fakegang_env.wiring import add_edges, assign_ips, finish

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
    pop = Population(spec.name, seed)
    pop.make_gang(pop.rng.randint(spec.gang_min, spec.gang_max))
    pop.make_others(spec.n_accounts)
    assign_ips(pop)
    net = finish(pop, add_edges(pop))
    proxy_ips = {net.accounts[g].ip_cluster_id for g in net.gang_ids}  # the classic proxy pool
    if playbook is None or playbook.is_classic:
        playbook = CLASSIC
    else:
        apply_playbook(net, playbook)
    net.traces = build_traces(net, playbook, proxy_ips)  # its own RNG: the build is untouched
    return net


def network_to_dict(net: Network) -> dict:
    """The network with its hidden truth as a JSON-ready dict (for `fakegang env generate`);
    each account's `traces` (the values a pivot searches by) are an additive key."""
    traces = net.traces
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
                **(
                    {"traces": {t: traces.value(net, t, a.account_id) for t in traces.kinds}}
                    if traces is not None
                    else {}
                ),
            }
            for a in net.accounts.values()
        ],
    }
