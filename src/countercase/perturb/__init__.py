"""The counterfactual engine: what a fact may be changed into, and the perturbation trees."""
