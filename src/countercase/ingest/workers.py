"""PDFs read in worker processes, each PDF under a limit of CPU seconds.

One bad file must not stall the stage (a truncated real PDF kept pdfminer busy for 65 s) nor end
it (a crash in a native library). So every PDF is read in a worker process:

- the worker gives each PDF ``cpu_seconds`` of CPU time (the ``RLIMIT_CPU`` soft limit, moved on
  before every PDF): CPU time, not wall time, so a busy machine does not turn a slow PDF into a
  failure that a quiet one would have read;
- past the limit the reader is interrupted and the PDF becomes an :class:`IngestFailure` saying
  so; a worker stuck in native code, or one that does not answer within ``wall_seconds``, is
  killed and replaced, and only its PDF is lost;
- results come back in the order of the jobs, whatever order the workers finish in.
"""

from __future__ import annotations

import logging
import multiprocessing
import resource
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from countercase.ingest.document import Document, IngestFailure

log = logging.getLogger(__name__)

Read = Callable[[Any, str, str], "Document | IngestFailure"]


class CpuLimitReached(BaseException):
    """Raised in a worker by SIGXCPU. A BaseException, so that the reader's own ``except
    Exception`` (one broken page must not lose the others) does not swallow it."""


def _over_limit(signum: int, frame: Any) -> None:
    raise CpuLimitReached


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _serve(conn: Connection, read: Read, cpu_seconds: int) -> None:
    """A worker's loop: read each job sent, answer with its document or failure."""
    signal.signal(signal.SIGXCPU, _over_limit)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends us
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    while True:
        try:
            data, source_path, doc_id = conn.recv()
        except (EOFError, OSError):
            return
        soft = int(_cpu_used()) + 1 + cpu_seconds
        resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY
                                                 else min(soft, hard), hard))
        try:
            result = read(data, source_path, doc_id)
        except CpuLimitReached:
            result = IngestFailure(source_path, f"gave up after {cpu_seconds} s of CPU time "
                                   "(params.yaml ingest.pdf_cpu_seconds): a damaged or "
                                   "pathological PDF")
        finally:
            resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
        conn.send(result)


@dataclass
class PdfJob:
    """One PDF to read; ``context`` travels with it untouched (e.g. its metadata record)."""

    data: Any  # bytes or a Path
    source_path: str
    doc_id: str
    context: Any = None


class _Worker:
    def __init__(self, context: Any, read: Read, cpu_seconds: int) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, read, cpu_seconds),
                                       daemon=True)
        self.process.start()
        child.close()
        self.job: tuple[int, PdfJob] | None = None
        self.started = 0.0

    def send(self, index: int, job: PdfJob) -> None:
        self.job, self.started = (index, job), time.monotonic()
        self.conn.send((job.data, job.source_path, job.doc_id))

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.conn.close()


def read_in_workers(jobs: Iterable[PdfJob], read: Read, workers: int = 1, cpu_seconds: int = 60,
                    wall_seconds: float | None = None
                    ) -> Iterator[tuple[PdfJob, Document | IngestFailure]]:
    """``(job, read(data, source_path, doc_id))`` of every job in ``workers`` processes, in job
    order.

    At most ``2 * workers`` jobs are in flight or waiting to be yielded at a time.
    """
    wall_seconds = wall_seconds if wall_seconds is not None else max(300.0, 10.0 * cpu_seconds)
    # fork: a worker starts at once and needs no importable __main__ (a notebook, a script)
    context = multiprocessing.get_context("fork")
    pool = [_Worker(context, read, cpu_seconds) for _ in range(max(1, workers))]
    jobs_iter = enumerate(jobs)  # consumed lazily: a folder of PDFs is never all in memory
    done: dict[int, tuple[PdfJob, Document | IngestFailure]] = {}
    next_out = 0
    exhausted = False

    def refill(worker: _Worker) -> None:
        nonlocal exhausted
        worker.job = None
        if exhausted or len(done) + sum(w.job is not None for w in pool) >= 2 * len(pool):
            return
        item = next(jobs_iter, None)
        if item is None:
            exhausted = True
            return
        worker.send(*item)

    try:
        for worker in pool:
            refill(worker)
        while any(w.job is not None for w in pool) or next_out in done:
            while next_out in done:
                yield done.pop(next_out)
                next_out += 1
                for worker in pool:
                    if worker.job is None:
                        refill(worker)
            busy = [w for w in pool if w.job is not None]
            if not busy:
                continue
            ready = wait([w.conn for w in busy], timeout=1.0)
            now = time.monotonic()
            for i, worker in enumerate(pool):
                if worker.job is None:
                    continue
                index, job = worker.job
                if worker.conn in ready:
                    try:
                        done[index] = job, worker.conn.recv()
                        refill(worker)
                        continue
                    except (EOFError, OSError):
                        reason = "the reader process died (a crash in a native PDF library)"
                elif now - worker.started > wall_seconds:
                    reason = (f"no answer within {wall_seconds:.0f} s: the reader was stopped "
                              "(stuck in a native PDF library?)")
                else:
                    continue
                log.warning("%s: %s", job.source_path, reason)
                done[index] = job, IngestFailure(job.source_path, reason)
                worker.stop()
                pool[i] = _Worker(context, read, cpu_seconds)
                refill(pool[i])
    finally:
        for worker in pool:
            worker.stop()
