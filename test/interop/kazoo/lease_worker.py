"""kazoo NonBlockingLease contenders, driven line by line by a test.

Usage: lease_worker.py HOST:PORT  (then commands on stdin, one JSON answer line each)
  race PATH SECONDS ID...    one kazoo client per ID, all trying at once (threads); answers
                             {"results": [{"id": ID, "obtained": bool}...]}
  read PATH                  kazoo's own reading of PATH/lease_holder: {"holder": ..., "end": ..., "raw": ...}
  increment LOCK COUNTER N ID...   per ID a client doing N unsafe read-modify-writes of COUNTER,
                             each inside kazoo's Lock on LOCK (threads): {"incremented": total}
"""
import datetime
import json
import sys
import threading

from kazoo.client import KazooClient

hosts = sys.argv[1]
clients = {}


def client(ident):
    if ident not in clients:
        c = KazooClient(hosts=hosts, timeout=10)
        c.start(timeout=30)
        clients[ident] = c
    return clients[ident]


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


say({"ready": True})
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "race":
        path, seconds, ids = words[1], float(words[2]), words[3:]
        for i in ids:
            client(i)
        results = {}
        start = threading.Barrier(len(ids))

        def run(i):
            start.wait()
            lease = client(i).NonBlockingLease(path, datetime.timedelta(seconds=seconds), identifier=i)
            results[i] = bool(lease)

        threads = [threading.Thread(target=run, args=(i,)) for i in ids]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        say({"results": [{"id": i, "obtained": results[i]} for i in ids]})
    elif words[0] == "read":
        c = client("reader")
        raw, _ = c.get(words[1] + "/lease_holder")
        data = json.loads(raw.decode("utf-8"))
        end = datetime.datetime.strptime(data["end"], "%Y-%m-%dT%H:%M:%S")
        say({"holder": data["holder"], "end": end.isoformat(), "raw": raw.decode("utf-8")})
    elif words[0] == "increment":
        lock_path, counter, n, ids = words[1], words[2], int(words[3]), words[4:]

        def bump(i):
            c = client(i)
            lock = c.Lock(lock_path, i)
            for _ in range(n):
                with lock:
                    v = int(c.get(counter)[0])
                    c.sync(counter)
                    c.set(counter, str(v + 1).encode())

        threads = [threading.Thread(target=bump, args=(i,)) for i in ids]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        say({"incremented": n * len(ids)})
    elif words[0] == "quit":
        break
for c in clients.values():
    c.stop()
    c.close()
