"""One kazoo SetPartitioner member, driven by a test: prints one JSON line per state it sees.

Usage: partitioner_member.py HOST:PORT PATH IDENTIFIER TIME_BOUNDARY_S ITEM...

Prints {"session": "<hex>"} once connected, then {"state": "ALLOCATING"|"ACQUIRED"|"RELEASE"|"FAILURE",
"items": [...]} on each change (items while ACQUIRED). The loop is kazoo's documented one: RELEASE is
answered with release_set(), ALLOCATING with wait_for_acquire(). A line "leave" on stdin (or EOF)
makes it finish() (release the locks, leave the party), print {"left": true} and exit 0.
"""
import json
import sys
import threading

from kazoo.client import KazooClient

hosts, path, identifier, boundary = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
items = sys.argv[5:]


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


zk = KazooClient(hosts=hosts, timeout=10)
zk.start(timeout=30)
say({"session": "%x" % zk.client_id[0]})
stop = threading.Event()


def read_stdin():
    for line in sys.stdin:
        if line.strip() == "leave":
            break
    stop.set()


threading.Thread(target=read_stdin, daemon=True).start()
p = zk.SetPartitioner(path=path, set=items, identifier=identifier, time_boundary=boundary)
seen = None
while not stop.is_set():
    state = (p.state, p.state_id)
    if state != seen:
        seen = state
        say({"state": p.state, "items": sorted(p) if p.acquired else []})
    if p.failed:
        break
    elif p.release:
        p.release_set()
    elif p.acquired:
        p.state_change_event.wait(0.1)
        p.state_change_event.clear()
    elif p.allocating:
        p.wait_for_acquire(0.1)
p.finish()
zk.stop()
zk.close()
say({"left": True})
