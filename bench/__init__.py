"""fakegang's benches and the tooling around their results, by role: `speed/` (timings),
`suite/` (`make bench`: the sections, the table, latest.json), `experiments/` (calibrations and
campaigns whose JSON the docs show), `fits/` (scripts that write shipped data) and `docs/` (the
renderer of every measured figure in the docs).

Scripts run by path (`python bench/speed/env_speed.py`); each puts the checkout on `sys.path`
first, so they import one another as `bench.<role>.<module>`.
"""
