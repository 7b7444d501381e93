"""COUNTERCASE: counterfactual precedent retrieval over Indian Supreme Court judgments."""

from countercase.runtime.java import configure_java
from countercase.runtime.threads import configure as configure_threads

__version__ = "0.1.0"

# Before anything imports pyserini: the JVM reads this configuration once, when it starts.
configure_java()
# Before anything imports torch or llama.cpp: libgomp reads its wait policy once, when it loads.
configure_threads()
