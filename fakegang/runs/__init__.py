"""The life of runs outside the episode graph (scale-out: backends, worker, shards)."""
