"""Structured fact sheets: the unit the counterfactual engine perturbs."""
