"""COUNTERCASE: counterfactual precedent retrieval over Indian Supreme Court judgments."""

from countercase.java import configure_java

__version__ = "0.1.0"

# Before anything imports pyserini: the JVM reads this configuration once, when it starts.
configure_java()
