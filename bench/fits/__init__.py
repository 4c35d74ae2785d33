"""Fit scripts: each writes a shipped data file that the agent loads at run time."""
