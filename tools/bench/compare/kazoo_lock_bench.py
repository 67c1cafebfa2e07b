#!/usr/bin/python3
"""Kazoo's uncontended lock cycle, for comparison with `zkr bench` workload 2.

Measures uncontended acquire()+release() of Kazoo's WriteLock, ReadLock and
Lock. Keep it equivalent to zkr bench workload 2 (uncontended
acquire+release) and to CuratorLockBench.java: one session, one lock object
per variant reused for every cycle, untimed warm-up cycles, then each
acquire() + release() timed on its own with a monotonic clock, and the
process CPU time (getrusage user+sys, all threads) over the timed cycles only.
Quantiles use the same rule as tools/bench/stats.cc
(sorted[min(n-1, floor(q*n))]).

Usage: /usr/bin/python3 kazoo_lock_bench.py \
           <connect-string> <base-path> <cycles> <warmup-cycles>
stdout: one JSON line per variant (write, read, exclusive), nothing else.
Errors: a message on stderr and exit code 1.
"""

import json
import resource
import sys
import time

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

try:
    from kazoo.version import __version__ as KAZOO_VERSION
except ImportError:  # pragma: no cover
    KAZOO_VERSION = "unknown"

SESSION_TIMEOUT_S = 10
CONNECT_WAIT_S = 15
# An uncontended acquire never waits; the bound only turns a lock held by
# someone else into an error instead of a hang.
ACQUIRE_TIMEOUT_S = 30
VARIANTS = ("write", "read", "exclusive")


def parse_count(text, name, minimum):
    try:
        value = int(text)
    except ValueError:
        raise ValueError("%s must be an integer: %s" % (name, text))
    if value < minimum:
        raise ValueError("%s must be >= %d" % (name, minimum))
    return value


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def quantile_us(sorted_ns, q):
    """Same rule as zkr::bench::Samples::Quantile."""
    index = min(len(sorted_ns) - 1, int(q * len(sorted_ns)))
    return sorted_ns[index] / 1e3


def not_acquired(path):
    return RuntimeError(
        "lock %s not acquired within %d s; is another client holding it?"
        % (path, ACQUIRE_TIMEOUT_S))


def delete_tree(client, path):
    try:
        client.delete(path, recursive=True)
    except NoNodeError:
        pass


def make_lock(client, variant, path):
    if variant == "write":
        return client.WriteLock(path)
    if variant == "read":
        return client.ReadLock(path)
    return client.Lock(path)


def bench(client, prefix, cycles, warmup):
    clock = time.perf_counter_ns  # CLOCK_MONOTONIC on Linux
    for variant in VARIANTS:
        path = prefix + "/kazoo-" + variant
        try:
            lock = make_lock(client, variant, path)

            for _ in range(warmup):
                if not lock.acquire(timeout=ACQUIRE_TIMEOUT_S):
                    raise not_acquired(path)
                lock.release()

            ns = [0] * cycles
            cpu_start = cpu_seconds()
            for i in range(cycles):
                start = clock()
                if not lock.acquire(timeout=ACQUIRE_TIMEOUT_S):
                    raise not_acquired(path)
                lock.release()
                ns[i] = clock() - start
            cpu = cpu_seconds() - cpu_start
        finally:
            delete_tree(client, path)

        ns.sort()
        sys.stdout.write(
            '{"library":"kazoo","version":%s,"variant":"%s","cycles":%d,'
            '"p50_us":%.1f,"p99_us":%.1f,"cpu_us_per_cycle":%.1f}\n'
            % (json.dumps(KAZOO_VERSION), variant, cycles,
               quantile_us(ns, 0.50), quantile_us(ns, 0.99),
               cpu * 1e6 / cycles))
        sys.stdout.flush()


def main(argv):
    if len(argv) != 5:
        raise ValueError("usage: kazoo_lock_bench.py <connect-string> "
                         "<base-path> <cycles> <warmup-cycles>")
    connect, base = argv[1], argv[2]
    cycles = parse_count(argv[3], "cycles", 1)
    warmup = parse_count(argv[4], "warmup-cycles", 0)
    if not base.startswith("/"):
        raise ValueError("base-path must start with '/': " + base)
    prefix = base.rstrip("/")

    client = KazooClient(hosts=connect, timeout=SESSION_TIMEOUT_S)
    try:
        client.start(timeout=CONNECT_WAIT_S)
    except Exception:
        client.close()
        raise
    try:
        bench(client, prefix, cycles, warmup)
    finally:
        client.stop()
        client.close()


if __name__ == "__main__":
    try:
        main(sys.argv)
    except Exception as e:  # report any failure the same way
        sys.stderr.write("kazoo_lock_bench: %s: %s\n" % (type(e).__name__, e))
        sys.exit(1)
