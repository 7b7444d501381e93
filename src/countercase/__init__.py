"""COUNTERCASE: counterfactual precedent retrieval over Indian Supreme Court judgments."""

from countercase.java import configure_java

__version__ = "0.1.0"

# Before anything imports pyserini: the JVM reads this configuration once, when it starts.
configure_java()


def __getattr__(name: str):
    # ``from countercase import Case``: the notebooks' facade, imported only when asked for
    if name in ("Case", "Workspace"):
        from countercase import case

        return getattr(case, name)
    raise AttributeError(f"module 'countercase' has no attribute {name!r}")
