"""What each corpus judgment's holding turns on (its holding profile), and the counterfactual
targets the citation graph gives an edit of a case's facts."""
