"""The ring: the ranks of a ``torch.distributed`` process group in rank order, each sending
one buffer per step to the next rank and receiving one from the previous, with
``torch.distributed.batch_isend_irecv`` (point-to-point; one ``ncclGroupStart`` / ``End`` on
NCCL, so a whole ring of sends and receives cannot deadlock). rime has no communication layer
of its own: this is all of it.
"""

import torch
import torch.distributed as dist

# Tags of the two streams of messages between neighbours (ignored by NCCL, matched by gloo):
# key / value blocks going forward, key / value gradient accumulators following them.
KV = 1
DKV = 2


class Transfer:
    """A posted shift: :meth:`wait` returns the buffer received from the previous rank once
    both the send and the receive are done (the sent buffer may then be reused)."""

    def __init__(self, requests, received):
        self._requests = requests
        self._received = received

    def wait(self):
        for r in self._requests:
            r.wait()
        return self._received


class Ring:
    """This process's place in the ring of ``group`` (None: the default group)."""

    def __init__(self, group=None):
        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError(
                "group: torch.distributed is not initialized (call "
                "torch.distributed.init_process_group first)"
            )
        self.group = group
        self.rank = dist.get_rank(group)
        if self.rank < 0:
            raise ValueError("group: this process is not a member of the process group")
        self.size = dist.get_world_size(group)
        whole = group if group is not None else dist.group.WORLD
        self._next = dist.get_global_rank(whole, (self.rank + 1) % self.size)
        self._prev = dist.get_global_rank(whole, (self.rank - 1) % self.size)

    def source(self, step):
        """The rank whose keys this rank holds at ``step`` (0: its own)."""
        return (self.rank - step) % self.size

    def shift(self, buffer, tag):
        """Posts the send of ``buffer`` (contiguous) to the next rank and the receive of one
        like it from the previous rank; returns the :class:`Transfer`."""
        received = torch.empty_like(buffer)
        ops = [
            dist.P2POp(dist.isend, buffer, self._next, self.group, tag),
            dist.P2POp(dist.irecv, received, self._prev, self.group, tag),
        ]
        return Transfer(dist.batch_isend_irecv(ops), received)


def pack(tensors):
    """One contiguous 1-D buffer holding ``tensors`` (of one dtype) one after the other."""
    return torch.cat([t.reshape(-1) for t in tensors])


def unpack(buffer, shapes):
    """Views of ``buffer`` (from :func:`pack`) with ``shapes``, dense row-major."""
    out, at = [], 0
    for shape in shapes:
        n = 1
        for s in shape:
            n *= s
        out.append(buffer[at:at + n].view(shape))
        at += n
    return out
