"""Grounded explanations of retrieval results and perturbation edges (plan section 8)."""
