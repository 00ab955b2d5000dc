"""Which ready allreduces share one MPI call: small tensors of one dtype, fused.

One allreduce costs a latency (tens of microseconds on loopback, more across machines)
plus bytes over bandwidth; a network of many small biases and BatchNorm parameters pays
the latency per tensor unless they travel together. Jobs are taken highest priority first
(MXNet's Module pushes parameter i with priority -i: backward makes the later layers'
gradients ready first, and among those waiting the earlier layers go first, because the
next forward needs their weights first), and each job of at most `bucket_bytes`
joins the open bucket of its dtype; a larger job goes alone, in place, without a copy.
The plan depends only on what every worker agreed on (ids, priorities, dtypes, sizes), so
every worker makes the same MPI calls in the same order.
"""

from __future__ import annotations

from typing import Any, Protocol


class _Reducible(Protocol):
    id: int
    priority: int
    array: Any


def plan_buckets(jobs: list[Any], bucket_bytes: int) -> list[list[Any]]:
    """The jobs grouped into allreduce calls, in the order the calls are made."""
    ordered = sorted(jobs, key=lambda j: (-j.priority, j.id))
    plan: list[list[Any]] = []
    open_bucket: dict[Any, tuple[list[Any], int]] = {}
    for job in ordered:
        nbytes = job.array.nbytes
        if nbytes > bucket_bytes:
            plan.append([job])
            continue
        members, size = open_bucket.get(job.array.dtype, ([], 0))
        if members and size + nbytes > bucket_bytes:
            members, size = [], 0
        if not members:
            plan.append(members)
        members.append(job)
        open_bucket[job.array.dtype] = (members, size + nbytes)
    return plan
