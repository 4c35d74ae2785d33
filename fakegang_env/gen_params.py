"""Per-task knobs of the generator: population sizes, ring tightness and evasion strength.

Pure data; the playbook pass (fakegang_env/playbook.py) derives weaker variants of these for the
ring's evasion, so it reads them here without importing the builder.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GenParams", "PARAMS"]


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
