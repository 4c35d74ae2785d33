"""`fakegang env tactics | generate --tactics/--campaign | baseline --tactics`."""

from __future__ import annotations

import json

from env_fixtures import run_env_cli as run_main

from fakegang_env.engine import Episode
from fakegang_env.generator import generate_network, network_to_dict
from fakegang_env.policies import run_policy
from fakegang_env.tactics import (
    CAMPAIGN_TACTICS,
    CHANNELS,
    GENERATIONS,
    campaign_round,
)


def test_tactics_lists_every_generation(capsys) -> None:
    code, out, _ = run_main(capsys, "env", "tactics", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [r["name"] for r in rows] == list(CAMPAIGN_TACTICS)
    for r in rows[: len(GENERATIONS)]:
        assert r["channels"] == GENERATIONS[r["name"]].channels and r["description"]
    assert rows[-2]["channels"] is None and rows[-1]["channels"] is None  # mixed, adaptive
    code, text, _ = run_main(capsys, "env", "tactics")
    assert code == 0 and all(name in text for name in CAMPAIGN_TACTICS)
    assert "evasion budget" in text and "shared_proxies" in text  # the adaptive operator's table
    assert "0.30" in text  # loose_cells' ring density, as a strength


def test_generate_prints_the_network_plus_the_playbook(capsys) -> None:
    code, out, _ = run_main(capsys, "env", "generate", "--task", "medium", "--seed", "4")
    data = json.loads(out)
    assert code == 0 and data.pop("tactics") == GENERATIONS["classic"].to_dict()
    assert data == network_to_dict(generate_network("medium", 4))  # the rest as before
    code, out, _ = run_main(
        capsys, "env", "generate", "--task", "medium", "--seed", "4", "--tactics", "mixed"
    )
    data = json.loads(out)
    assert data["tactics"]["name"] == "mixed" and list(data["tactics"]["channels"]) == list(
        CHANNELS
    )
    assert data["gang_ids"] == network_to_dict(generate_network("medium", 4, "mixed"))["gang_ids"]


def test_generate_a_campaign_round(capsys) -> None:
    argv = ("env", "generate", "--task", "easy", "--campaign", "3", "--round", "8")
    code, out, _ = run_main(capsys, *argv, "--tactics", "loose_cells")
    data = json.loads(out)
    spec = campaign_round("easy", 3, 8, "loose_cells")
    assert code == 0
    assert (data["seed"], data["campaign"], data["round"], data["regime"]) == (
        spec.seed,
        3,
        8,
        spec.regime,
    )
    assert data["tactics"] == spec.playbook.to_dict()
    assert data["gang_ids"] == Episode.for_round("easy", 3, 8, "loose_cells").network.gang_ids


def test_generate_refuses_conflicting_or_missing_options(capsys) -> None:
    base = ("env", "generate", "--task", "easy")
    cases = [
        ((*base, "--seed", "1", "--campaign", "2", "--round", "0"), "cannot be combined"),
        ((*base, "--campaign", "2"), "go together"),
        ((*base, "--round", "2"), "go together"),
        (base, "--seed N"),
        ((*base, "--seed", "1", "--tactics", "sneaky"), "invalid choice"),
        ((*base, "--campaign", "-1", "--round", "0"), ">= 0"),
    ]
    for argv, needle in cases:
        code, out, err = run_main(capsys, *argv)
        assert code == 2 and out == "" and needle in err, (argv, err)


def test_baseline_takes_tactics(capsys) -> None:
    argv = ("env", "baseline", "--policy", "naive", "--task", "easy", "--seeds", "0-2")
    code, out, _ = run_main(capsys, *argv, "--tactics", "crafted_content", "--json")
    summary = json.loads(out)
    expected = [run_policy("naive", "easy", s, "crafted_content")["won"] for s in range(3)]
    assert code == 0 and summary["tactics"] == "crafted_content"
    assert summary["win_rate"] == sum(expected) / 3
    code, out, _ = run_main(capsys, *argv, "--tactics", "crafted_content")
    assert out.splitlines()[0].endswith("tactics=crafted_content")
