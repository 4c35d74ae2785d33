"""What `openenv.yaml`'s `validation:` block points at: OpenEnv's quality bar (RFC 008).

* `runtime.json`: the probe plan OpenEnv's runtime level plays over `/ws` (one oracle episode).
* `canaries.json`: recorded trajectories (a win and losses per task) that must replay to their
  recorded rewards; `python -m fakegang_env.validation.canaries` records or checks them.
* `oracle.py`: the oracle script (it knows the hidden ring because it regenerates the network
  from `(task, seed)` in its own process; the agent's API never sees it).
* `wire.py`: the raw `/ws` protocol both scripts speak (the collector's own frames).
"""
