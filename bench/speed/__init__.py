"""Speed benches: how long the environment, the agent and the viewer take (bench/speed/timing.py
is their shared harness)."""
