"""Two MPI ranks over UCX (mpirun … python3 mpi_check.py p2p|coll), every buffer checked.

p2p: blocking and non-blocking sends of 1 B to 4 MiB in both directions, each byte pattern
derived from the size and the iteration, compared on receipt; then one-sided puts and gets in a
window. coll: barrier, bcast, allreduce (sum), allgather, alltoall, reduce_scatter over sizes up
to 1 MiB, results compared with what they must be. Exits non-zero on any mismatch.
"""
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
assert size == 2, "run with two ranks"
peer = 1 - rank
failures = 0


def pattern(n, seed):
    return ((np.arange(n, dtype=np.uint64) * 2654435761 + seed) & 0xFF).astype(np.uint8)


def expect(ok, what):
    global failures
    if not ok:
        failures += 1
        print(f"rank {rank}: FAIL {what}", flush=True)


def p2p():
    for n in (1, 64, 4096, 65536, 1 << 20, 4 << 20):
        for it in range(3):
            seed = n + it
            if rank == 0:
                comm.Send(pattern(n, seed), dest=peer, tag=it)
                back = np.empty(n, dtype=np.uint8)
                comm.Recv(back, source=peer, tag=it)
                expect(np.array_equal(back, pattern(n, seed + 1)), f"echo of {n} B")
            else:
                buf = np.empty(n, dtype=np.uint8)
                comm.Recv(buf, source=peer, tag=it)
                expect(np.array_equal(buf, pattern(n, seed)), f"recv of {n} B")
                comm.Send(pattern(n, seed + 1), dest=peer, tag=it)
        out = pattern(n, 7 + rank)
        got = np.empty(n, dtype=np.uint8)
        reqs = [comm.Isend(out, dest=peer, tag=99), comm.Irecv(got, source=peer, tag=99)]
        MPI.Request.Waitall(reqs)
        expect(np.array_equal(got, pattern(n, 7 + peer)), f"isend/irecv of {n} B")
    n = 1 << 20
    win_buf = np.zeros(n, dtype=np.uint8)
    win = MPI.Win.Create(win_buf, comm=comm)
    origin = pattern(n, 40 + rank)  # must outlive the epoch
    win.Fence()
    win.Put(origin, target_rank=peer)
    win.Fence()
    expect(np.array_equal(win_buf, pattern(n, 40 + peer)), "window put")
    got = np.empty(n, dtype=np.uint8)
    win.Fence()
    win.Get(got, target_rank=peer)
    win.Fence()
    expect(np.array_equal(got, pattern(n, 40 + rank)), "window get")
    win.Free()


def coll():
    for n in (1, 1024, 65536, 1 << 20):
        comm.Barrier()
        buf = pattern(n, 3) if rank == 0 else np.empty(n, dtype=np.uint8)
        comm.Bcast(buf, root=0)
        expect(np.array_equal(buf, pattern(n, 3)), f"bcast of {n} B")
        vals = np.arange(n, dtype=np.int64) + rank
        total = np.empty(n, dtype=np.int64)
        comm.Allreduce(vals, total, op=MPI.SUM)
        expect(np.array_equal(total, 2 * np.arange(n, dtype=np.int64) + 1), f"allreduce of {n}")
        gathered = np.empty(2 * n, dtype=np.uint8)
        comm.Allgather(pattern(n, 10 + rank), gathered)
        expect(np.array_equal(gathered, np.concatenate([pattern(n, 10), pattern(n, 11)])),
               f"allgather of {n} B")
        send = np.concatenate([pattern(n, 20 + 2 * rank), pattern(n, 21 + 2 * rank)])
        recv = np.empty(2 * n, dtype=np.uint8)
        comm.Alltoall(send, recv)
        want = np.concatenate([pattern(n, 20 + rank), pattern(n, 22 + rank)])
        expect(np.array_equal(recv, want), f"alltoall of {n} B")
        part = np.empty(n, dtype=np.int64)
        comm.Reduce_scatter_block(np.arange(2 * n, dtype=np.int64) * (rank + 1), part, op=MPI.SUM)
        expect(np.array_equal(part, 3 * (np.arange(n, dtype=np.int64) + rank * n)),
               f"reduce_scatter of {n}")


{"p2p": p2p, "coll": coll}[sys.argv[1]]()
failures = comm.allreduce(failures, op=MPI.SUM)
if rank == 0:
    print(f"mpi_check {sys.argv[1]}: {'ok' if failures == 0 else f'{failures} failures'}")
sys.exit(1 if failures else 0)
