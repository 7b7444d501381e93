"""The OpenMP wait policy is set before torch loads, and a user's own setting is kept."""

from __future__ import annotations

import os
import subprocess
import sys


def _policy_after_import(env: dict) -> str:
    code = "import countercase, os; print(os.environ['OMP_WAIT_POLICY'])"
    return subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_importing_the_package_makes_waiting_threads_sleep():
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    assert _policy_after_import(env) == "PASSIVE"
    assert _policy_after_import({**env, "OMP_WAIT_POLICY": "ACTIVE"}) == "ACTIVE"
