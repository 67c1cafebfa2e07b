#!/usr/bin/python3
"""Kazoo's recipes under the shapes `zkr bench --compare` runs ours in (rows
8ks, 8krw, 8ke, 8kb, 8kg). Keep each equivalent to CuratorRecipeBench.java and
to the driver's own loop (tools/bench/compare_recipes.cc,
compare_barrier_multilock.cc, compare_group.cc):

  semaphore SECONDS: Semaphore(max_leases=4), 16 KazooClients (a session
    each, one thread each), each acquire() + release() at once in a loop for
    SECONDS; acquisitions per second.
  rwmix SECONDS: ReadLock / WriteLock on one path, 16 reader clients and 2
    writer clients, each acquire, 100 us of work, release, in a loop for
    SECONDS; acquisitions per second, the most readers inside at once,
    violations (a writer inside with anyone else), and "stalled": true if an
    acquire waited 5 s (kazoo 2.8.0's read/write lock can deadlock: kazoo
    issue 649), after which everyone stops (then the rate means nothing).
  failover ROUNDS: Election; per round a new client's run(func) queues
    behind the leader, 20 ms after it is queued the leader's client is
    stopped (its session ends), and the sample runs from that stop() call to
    the new leader's func; p50, p99 and the share of samples of 50 ms or
    more.
  barrier ROUNDS: DoubleBarrier of 4 clients (a session and a thread each);
    per round, on a fresh path, every client enter()s and then leave()s; the
    sample runs from the round's start (threads started) until the last
    leave() returned; p50 and p99 over the rounds done. (Kazoo has no
    multi-lock.) A round still running after 10 s has stalled: the line
    then says "stalled": true, the round, and where its members were
    ("enter" or "leave"), and no later round runs. Kazoo 2.8.0's leave()
    deletes the `ready` node; a member whose enter() has not yet seen it
    then waits for a `ready` that never comes back.
  group ROUNDS: Party; a watching client's ChildrenWatch on the group path;
    per round a member (its own client) join()s, and the sample runs from
    join() until the watcher's function sees its node; then it leave()s and
    the watcher sees it go (untimed). p50 and p99.

Usage: /usr/bin/python3 kazoo_recipe_bench.py \
           <workload> <connect-string> <base-path> <seconds-or-rounds> <warm-up>
The warm-up (seconds or rounds, untimed, on the same clients and recipe
objects) runs first, as in the Java program. Uses <base-path>/kazoo-<workload>
(and, for the semaphore, Kazoo's <base-path>/kazoo-semaphore-__lock__) and
deletes them at the end. stdout: one JSON line, nothing else. Errors: a
message on stderr and exit code 1.
"""

import json
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.exceptions import LockTimeout, NoNodeError

try:
    from kazoo.version import __version__ as KAZOO_VERSION
except ImportError:  # pragma: no cover
    KAZOO_VERSION = "unknown"

SESSION_TIMEOUT_S = 10
CONNECT_WAIT_S = 15
WAIT_S = 30  # any single wait longer than this is an error
LEASES, SESSIONS, READERS, WRITERS = 4, 16, 16, 2
WORK_S = 100e-6  # a mix participant's critical section
SETTLE_S = 0.020  # kFailoverSettle
# In the mix, an acquire that waits this long has stalled: a holder keeps
# the lock for 100 us, and 17 others at most are ahead of it.
STALL_S = 5
# A double-barrier round takes tens of ms; one that has run this long has
# stalled.
BARRIER_STALL_S = 10
clock = time.perf_counter_ns  # CLOCK_MONOTONIC on Linux


def client(connect):
    c = KazooClient(hosts=connect, timeout=SESSION_TIMEOUT_S)
    try:
        c.start(timeout=CONNECT_WAIT_S)
    except Exception:
        c.close()
        raise
    return c


def close(c):
    c.stop()
    c.close()


def delete_tree(c, path):
    try:
        c.delete(path, recursive=True)
    except NoNodeError:
        pass


class Stalled(RuntimeError):
    pass


def run_all(loops, seconds, bounded=False):
    """Runs each loop(end) on its own thread until they all return; raises
    the first error. `bounded`: a loop still running `seconds` after the
    start is an error (its daemon thread is left behind)."""
    errors = []
    end = time.monotonic() + seconds

    def guarded(loop):
        try:
            loop(end)
        except Exception as e:  # pylint: disable=broad-except
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(loop,), daemon=bounded)
               for loop in loops]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0, end - time.monotonic()) if bounded else None)
        if t.is_alive():
            raise Stalled("a participant was still waiting after %d s" % seconds)
    if errors:
        raise errors[0]


def timed(loops, counter, seconds, warmup):
    """The warm-up untimed, then the timed run; its wall time in seconds."""
    if warmup > 0:
        run_all(loops, warmup)
    counter[0] = 0
    start = clock()
    run_all(loops, seconds)
    return (clock() - start) / 1e9


def quantile_us(sorted_ns, q):
    """Same rule as zkr::bench::Samples::Quantile."""
    return sorted_ns[min(len(sorted_ns) - 1, int(q * len(sorted_ns)))] / 1e3


def line(variant, fields):
    out = {"library": "kazoo", "version": KAZOO_VERSION, "variant": variant}
    out.update(fields)
    return json.dumps(out, separators=(",", ":"))


def semaphore(connect, path, seconds, warmup):
    clients = [client(connect) for _ in range(SESSIONS)]
    count = [0]
    count_lock = threading.Lock()

    def make_loop(sem):
        def loop(end):
            while time.monotonic() < end:
                if not sem.acquire(timeout=WAIT_S):
                    raise RuntimeError("no lease within %d s" % WAIT_S)
                with count_lock:
                    count[0] += 1
                sem.release()
        return loop

    loops = [make_loop(c.Semaphore(path, "s%d" % i, max_leases=LEASES))
             for i, c in enumerate(clients)]
    wall = timed(loops, count, seconds, warmup)
    delete_tree(clients[0], path)
    delete_tree(clients[0], path + "-__lock__")  # the Semaphore's own lock
    for c in clients:
        close(c)
    return line("semaphore", {"sessions": SESSIONS, "leases": LEASES,
                              "acquisitions": count[0], "seconds": round(wall, 3),
                              "acquisitions_per_s": round(count[0] / wall, 1)})


def rwmix(connect, path, seconds, warmup):
    clients = [client(connect) for _ in range(READERS + WRITERS)]
    count = [0]
    state = {"readers": 0, "writers": 0, "max_readers": 0, "violations": 0}
    mu = threading.Lock()

    stalled = threading.Event()

    def make_loop(lock, write):
        def loop(end):
            while time.monotonic() < end and not stalled.is_set():
                try:
                    if not lock.acquire(timeout=STALL_S):
                        raise LockTimeout()
                except LockTimeout:
                    # Kazoo 2.8.0's read lock may wait for a writer queued
                    # after it while that writer waits for it (kazoo issue
                    # 649, fixed in 2.9.0): no holder, no progress. The
                    # timed-out lock deletes its node; everyone stops.
                    stalled.set()
                    return
                with mu:
                    count[0] += 1
                    if write:
                        state["writers"] += 1
                        if state["writers"] != 1 or state["readers"] != 0:
                            state["violations"] += 1
                    else:
                        state["readers"] += 1
                        state["max_readers"] = max(state["max_readers"], state["readers"])
                        if state["writers"] != 0:
                            state["violations"] += 1
                time.sleep(WORK_S)
                with mu:
                    state["writers" if write else "readers"] -= 1
                lock.release()
        return loop

    loops = []
    for i, c in enumerate(clients):
        write = i >= READERS
        loops.append(make_loop(c.WriteLock(path) if write else c.ReadLock(path), write))
    wall = timed(loops, count, seconds, warmup)
    delete_tree(clients[0], path)
    for c in clients:
        close(c)
    return line("rwmix", {"readers": READERS, "writers": WRITERS, "acquisitions": count[0],
                          "stalled": stalled.is_set(),
                          "seconds": round(wall, 3),
                          "acquisitions_per_s": round(count[0] / wall, 1),
                          "max_concurrent_readers": state["max_readers"],
                          "violations": state["violations"]})


class Candidate(object):
    """A client whose Election.run(func) runs on its own thread; func notes
    when it was called and holds leadership until `resign` is set."""

    def __init__(self, connect, path, n):
        self.client = client(connect)
        self.election = self.client.Election(path, "candidate-%d" % n)
        self.led = threading.Event()
        self.led_at = 0
        self.resign = threading.Event()
        self.thread = threading.Thread(target=self._run)
        self.thread.start()

    def _lead(self):
        self.led_at = clock()
        self.led.set()
        self.resign.wait()

    def _run(self):
        try:
            self.election.run(self._lead)
        except Exception:  # pylint: disable=broad-except
            pass  # the session was closed under it: the failover itself

    def await_leadership(self):
        if not self.led.wait(WAIT_S):
            raise RuntimeError("not elected within %d s" % WAIT_S)


def failover(connect, path, rounds, warmup):
    samples = []
    leader = Candidate(connect, path, -warmup)
    leader.await_leadership()
    for round_ in range(1 - warmup, rounds + 1):
        nxt = Candidate(connect, path, round_)
        # Queued behind the leader (its node exists), then its watch settles.
        for _ in range(1000):
            if len(leader.election.contenders()) >= 2:
                break
            time.sleep(0.002)
        if len(leader.election.contenders()) != 2:
            raise RuntimeError("the next candidate was not queued")
        time.sleep(SETTLE_S)
        killed = clock()
        leader.client.stop()  # the leader's session ends: its node goes
        nxt.await_leadership()
        if round_ >= 1:
            samples.append(nxt.led_at - killed)
        leader.resign.set()
        leader.thread.join()
        leader.client.close()
        leader = nxt
    leader.resign.set()
    leader.thread.join()
    delete_tree(leader.client, path)
    close(leader.client)
    samples.sort()
    return line("failover", {"rounds": rounds,
                             "p50_us": round(quantile_us(samples, 0.5), 1),
                             "p99_us": round(quantile_us(samples, 0.99), 1),
                             "share_over_50ms": round(
                                 sum(1 for n in samples if n >= 50e6) / len(samples), 2)})


def barrier(connect, path, rounds, warmup):
    members = 4
    clients = [client(connect) for _ in range(members)]
    samples = []
    stall = None  # (round, phases of the members still inside) if one stalled
    for round_ in range(-warmup, rounds):
        round_path = "%s/r%d" % (path, round_ + warmup)
        phases = ["start"] * members

        def make_loop(b, i):
            def loop(_):
                phases[i] = "enter"
                b.enter()
                if not b.participating:
                    raise RuntimeError("enter failed")
                phases[i] = "leave"
                b.leave()
                phases[i] = "done"
            return loop

        loops = [make_loop(c.DoubleBarrier(round_path, members, "m%d" % i), i)
                 for i, c in enumerate(clients)]
        start = clock()
        try:
            run_all(loops, BARRIER_STALL_S, bounded=True)
        except Stalled:
            # Kazoo 2.8.0: a member still entering when another has left
            # can wait for ever (see the module's docstring).
            stall = (round_ + warmup, sorted(p for p in phases if p != "done"))
            break
        if round_ >= 0:
            samples.append(clock() - start)
        delete_tree(clients[0], round_path)
    for c in clients:
        close(c)  # a stalled member's node goes with its session
    cleaner = client(connect)
    delete_tree(cleaner, path)
    close(cleaner)
    fields = {"count": len(samples)}
    if samples:
        samples.sort()
        fields.update({"p50_us": round(quantile_us(samples, 0.5), 1),
                       "p99_us": round(quantile_us(samples, 0.99), 1)})
    if stall:
        fields.update({"stalled": True, "stalled_round": stall[0],
                       "stalled_in": "+".join(stall[1])})
    return line("barrier", fields)


def group(connect, path, rounds, warmup):
    watcher, joiner = client(connect), client(connect)
    watcher.ensure_path(path)  # a ChildrenWatch on a missing path stops
    cond = threading.Condition()
    heard = {}  # node -> when the watcher saw it come (-1: go)
    known = [set()]

    def on_children(children):
        now = clock()
        with cond:
            current = set(children)
            for node in current - known[0]:
                heard[node] = now
            for node in known[0] - current:
                heard[node] = -1
            known[0] = current
            cond.notify_all()

    def await_heard(node, created):
        with cond:
            if not cond.wait_for(lambda: (heard.get(node, 0) > 0) == created
                                 and node in heard, WAIT_S):
                raise RuntimeError("the watcher missed " + node)

    watcher.ChildrenWatch(path, on_children)
    samples = []
    for round_ in range(-warmup, rounds):
        party = joiner.Party(path, "m%d" % (round_ + warmup))
        start = clock()
        party.join()
        await_heard(party.node, True)
        if round_ >= 0:
            samples.append(heard[party.node] - start)
        party.leave()
        await_heard(party.node, False)
    delete_tree(watcher, path)
    close(watcher)
    close(joiner)
    samples.sort()
    return line("group", {"count": rounds,
                          "p50_us": round(quantile_us(samples, 0.5), 1),
                          "p99_us": round(quantile_us(samples, 0.99), 1)})


def main(argv):
    if len(argv) != 6 or argv[1] not in ("semaphore", "rwmix", "failover", "barrier",
                                             "group"):
        raise ValueError("usage: kazoo_recipe_bench.py semaphore|rwmix|failover|barrier|group "
                         "<connect-string> <base-path> <seconds-or-rounds> <warm-up>")
    workload, connect = argv[1], argv[2]
    path = argv[3].rstrip("/") + "/kazoo-" + workload
    amount, warmup = float(argv[4]), float(argv[5])
    if not amount > 0 or not warmup >= 0:
        raise ValueError("bad amount or warm-up: %s %s" % (argv[4], argv[5]))
    if workload == "semaphore":
        out = semaphore(connect, path, amount, warmup)
    elif workload == "rwmix":
        out = rwmix(connect, path, amount, warmup)
    elif workload == "failover":
        out = failover(connect, path, int(amount), int(warmup))
    elif workload == "barrier":
        out = barrier(connect, path, int(amount), int(warmup))
    else:
        out = group(connect, path, int(amount), int(warmup))
    sys.stdout.write(out + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    try:
        main(sys.argv)
    except Exception as e:  # report any failure the same way
        sys.stderr.write("kazoo_recipe_bench: %s: %s\n" % (type(e).__name__, e))
        sys.exit(1)
