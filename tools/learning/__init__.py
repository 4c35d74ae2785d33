"""Learning from debriefs: refit weights, the tactics estimate, credit and alpha, insights."""
