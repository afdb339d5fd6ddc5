"""kazoo (python3-kazoo) against a server: nodes, data, versions, an ephemeral, a watch, a
transaction and kazoo's Lock recipe around a counter. Prints one JSON object of what it saw.

Usage: tenure_server_check.py HOST:PORT
"""
import json
import sys
import threading

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

hosts = sys.argv[1]
out = {}
zk = KazooClient(hosts=hosts, timeout=10)
zk.start(timeout=15)
try:
    zk.ensure_path("/kazoo/app")
    zk.create("/kazoo/app/config", b"v1")
    data, stat = zk.get("/kazoo/app/config")
    out["get"] = [data.decode(), stat.version]
    stat = zk.set("/kazoo/app/config", b"v2", version=0)
    out["set_version"] = stat.version

    fired = threading.Event()
    events = []

    def watcher(event):
        events.append([event.type, event.path])
        fired.set()

    zk.get("/kazoo/app/config", watch=watcher)
    zk.set("/kazoo/app/config", b"v3")
    fired.wait(10)
    out["watch"] = events

    eph = zk.create("/kazoo/app/member-", b"m", ephemeral=True, sequence=True)
    out["ephemeral_owner_is_me"] = zk.exists(eph).ephemeralOwner == zk.client_id[0]

    tx = zk.transaction()
    tx.create("/kazoo/app/t1", b"a")
    tx.create("/kazoo/app/t2", b"b")
    out["transaction"] = [r if isinstance(r, str) else type(r).__name__ for r in tx.commit()]

    zk.create("/kazoo/counter", b"0")
    lock = zk.Lock("/kazoo/lock", "kazoo")

    def bump(n):
        c = KazooClient(hosts=hosts, timeout=10)
        c.start(timeout=15)
        l = c.Lock("/kazoo/lock", "worker")
        for _ in range(n):
            with l:
                v = int(c.get("/kazoo/counter")[0])
                c.set("/kazoo/counter", str(v + 1).encode())
        c.stop()
        c.close()

    workers = [threading.Thread(target=bump, args=(20,)) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    out["counter"] = int(zk.get("/kazoo/counter")[0])
    out["children"] = sorted(c for c in zk.get_children("/kazoo/app") if not c.startswith("member-"))
    try:
        zk.get("/kazoo/missing")
        out["missing"] = "found"
    except NoNodeError:
        out["missing"] = "NoNodeError"
finally:
    zk.stop()
    zk.close()
print(json.dumps(out))
