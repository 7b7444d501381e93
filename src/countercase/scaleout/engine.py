"""Where the dataflow's tasks run: in this process (``local``), or on Dask (``dask``: a local
cluster of worker processes, or the scheduler at ``address``).

Dask rather than Ray: the stages are Python functions over files on a shared disk, and
Dask's ``Client.map``/``gather`` runs them on a local cluster or a remote scheduler with one
pure-Python dependency (``distributed``), no object store and no extra daemon; Ray's strengths
(actors, a GPU scheduler, its own data format) are not what this dataflow needs.

Every task is a module-level function of picklable arguments that writes its own shard and
returns a small summary; results come back in the order the tasks were given, whatever order
they finished in, so the merge is deterministic.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, Literal

from tqdm import tqdm

log = logging.getLogger(__name__)

EngineKind = Literal["local", "dask"]


class Engine:
    """``with Engine("dask", workers=2) as engine: engine.map(task, items)``."""

    def __init__(self, kind: EngineKind = "local", workers: int = 1,
                 address: str | None = None) -> None:
        if kind not in ("local", "dask"):
            raise ValueError(f"unknown engine {kind!r}: use local or dask")
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.kind, self.workers, self.address = kind, workers, address
        self._client = self._cluster = None

    def __enter__(self) -> "Engine":
        if self.kind == "dask":
            import dask
            from dask.distributed import Client, LocalCluster

            # a task reads each PDF in a child process under its CPU limit
            # (countercase.ingest.workers), which a daemonic worker may not start; a remote
            # cluster needs the same setting in its workers' configuration
            dask.config.set({"distributed.worker.daemon": False})

            if self.address:
                self._client = Client(self.address)
            else:
                # one thread a worker: the tasks are CPU-bound Python, so processes scale
                self._cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1,
                                             processes=True, dashboard_address=None,
                                             silence_logs=logging.WARNING)
                self._client = Client(self._cluster)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None

    def map(self, task: Callable[[Any], Any], items: Sequence[Any], desc: str) -> list[Any]:
        """``task`` over ``items``, the results in the order of ``items``."""
        if self._client is None:
            return [task(item) for item in tqdm(items, desc=desc, unit="shard")]
        from dask.distributed import as_completed

        futures = self._client.map(task, list(items), pure=False)
        for _ in tqdm(as_completed(futures), total=len(futures), desc=desc, unit="shard"):
            pass
        return self._client.gather(futures)
