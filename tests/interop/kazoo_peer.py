"""A real Kazoo participant for the interop tests (tests/interop/README.md).

It takes a lock or leadership ROUNDS times and writes each hold to a shared
ledger, beside our participants in the same queue; the test's checker finds
any overlap.

    /usr/bin/python3 tests/interop/kazoo_peer.py \
        HOSTS RECIPE PATH NAME LEDGER ROUNDS HOLD_MS

RECIPE: lock (Lock), write (WriteLock), read (ReadLock), election (Election;
a term is the leader function). ROUNDS -1: take it once and hold until
killed. It starts once the file LEDGER.go exists, so that all contend at
once. stdout: "ready" once connected, "held" when holding for ever.
Errors: a message on stderr and exit code 1.
"""
import os
import sys
import time

from kazoo.client import KazooClient


def record(ledger, run, mode, what):
    # One line, one write(2) with O_APPEND: atomic among the processes.
    line = "%s %s %s %d\n" % (run, mode, what, time.time_ns() // 1000)
    fd = os.open(ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def main(argv):
    if len(argv) != 8:
        raise ValueError("usage: kazoo_peer.py HOSTS RECIPE PATH NAME LEDGER ROUNDS HOLD_MS")
    hosts, recipe, path, name, ledger = argv[1:6]
    rounds, hold = int(argv[6]), int(argv[7]) / 1000.0
    client = KazooClient(hosts=hosts, timeout=10.0)
    client.start(timeout=30)
    print("ready", flush=True)
    while not os.path.exists(ledger + ".go"):  # every participant starts at once
        time.sleep(0.005)
    mode = "R" if recipe == "read" else "W"

    def hold_once(run):
        record(ledger, run, mode, "begin")
        if rounds < 0:
            print("held", flush=True)
            while True:
                time.sleep(3600)
        time.sleep(hold)
        record(ledger, run, mode, "end")

    try:
        round_ = 0
        while rounds < 0 or round_ < rounds:
            run = "%s-%d" % (name, round_)
            if recipe == "election":
                client.Election(path, name).run(hold_once, run)
            else:
                make = {"lock": client.Lock, "write": client.WriteLock,
                        "read": client.ReadLock}[recipe]
                with make(path, name):
                    hold_once(run)
            round_ += 1
    finally:
        client.stop()
        client.close()


if __name__ == "__main__":
    try:
        main(sys.argv)
    except Exception as error:  # pylint: disable=broad-except
        sys.stderr.write("kazoo_peer: %r\n" % (error,))
        sys.exit(1)
