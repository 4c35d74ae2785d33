"""The rule engine: evidence features, the logistic rule, action strings, the rules-only player."""
