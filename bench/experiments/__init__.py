"""Experiments and calibrations: questions answered once, kept for the docs by keep_campaign.py."""
