"""The legal vocabulary every layer speaks: the acts and their canonical section ids, and the
closed vocabularies of benches, outcomes and parties."""
