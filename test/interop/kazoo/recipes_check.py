"""kazoo's whole recipe set against two ZooKeeper servers (or front ends) of one namespace: every
recipe spreads its clients over both. Prints one JSON line per recipe, {"recipe": NAME, ...what it
saw} (or {"recipe": NAME, "error": "..."}), then {"done": true}.

Usage: recipes_check.py HOST_A:PORT HOST_B:PORT ROOT

Reads of something another client wrote through the other server sync first, as on an ensemble.
"""
import datetime
import json
import sys
import threading
import time
import traceback

from kazoo.client import KazooClient
from kazoo.exceptions import LockTimeout, NoAuthError
from kazoo.recipe.cache import TreeCache, TreeEvent
from kazoo.security import make_digest_acl

host_a, host_b, root = sys.argv[1], sys.argv[2], sys.argv[3].rstrip("/")
hosts = [host_a, host_b]
opened = []


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def client(i, auth=None):
    """A new kazoo client on front end i % 2."""
    c = KazooClient(hosts=hosts[i % 2], timeout=10, auth_data=auth)
    c.start(timeout=30)
    opened.append(c)
    return c


def threads(fns):
    ts = [threading.Thread(target=f) for f in fns]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    return not any(t.is_alive() for t in ts)


class Inside:
    """Counts holders inside a critical section; remembers the most at once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0

    def __enter__(self):
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def __exit__(self, *_):
        with self.lock:
            self.now -= 1


def recipe_lock(p):
    a, b = client(0), client(1)
    a.create(p + "/counter", b"0", makepath=True)
    inside = Inside()

    def bump(c, ident):
        lock = c.Lock(p + "/lock", ident)
        for _ in range(25):
            with lock:
                with inside:
                    v = int(c.get(p + "/counter")[0])
                    time.sleep(0.001)
                    c.set(p + "/counter", str(v + 1).encode())

    finished = threads([lambda: bump(a, "a"), lambda: bump(b, "b")])
    a.sync(p + "/counter")
    return {"finished": finished, "counter": int(a.get(p + "/counter")[0]), "most_inside": inside.most}


def refused(lock, seconds=1):
    """True if `lock` is not acquired within `seconds` (kazoo raises LockTimeout)."""
    try:
        return not lock.acquire(timeout=seconds)
    except LockTimeout:
        return True


def recipe_rwlock(p):
    a, b = client(0), client(1)
    r1, r2 = a.ReadLock(p, "r1"), b.ReadLock(p, "r2")
    r1.acquire(timeout=10)
    readers_together = r2.acquire(timeout=10)
    w = b.WriteLock(p, "w")
    writer_blocked = refused(w)
    r1.release()
    r2.release()
    writer_after = w.acquire(timeout=10)
    r3 = a.ReadLock(p, "r3")
    reader_blocked = refused(r3)
    w.release()
    reader_after = r3.acquire(timeout=10)
    r3.release()
    return {
        "readers_together": readers_together,
        "writer_blocked_by_readers": writer_blocked,
        "writer_after_readers": writer_after,
        "reader_blocked_by_writer": reader_blocked,
        "reader_after_writer": reader_after,
    }


def recipe_semaphore(p):
    inside = Inside()
    holders_seen = []
    connected = threading.Barrier(4)

    def hold(i):
        c = client(i)
        s = c.Semaphore(p, "s%d" % i, max_leases=2)
        connected.wait(60)  # all four contend, however slow the connects
        for _ in range(2):
            with s:
                with inside:
                    holders_seen.append(len(s.lease_holders()))
                    time.sleep(0.2)

    finished = threads([lambda i=i: hold(i) for i in range(4)])
    return {"finished": finished, "most_inside": inside.most, "most_holders_listed": max(holders_seen)}


def recipe_barrier(p):
    a, b = client(0), client(1)
    ba = a.Barrier(p)
    ba.create()
    bb = b.Barrier(p)
    b.sync(p)
    blocked = not bb.wait(timeout=1)
    passed = []
    t = threading.Thread(target=lambda: passed.append(bb.wait(timeout=20)))
    t.start()
    time.sleep(0.3)
    ba.remove()
    t.join(30)
    return {"blocked_while_up": blocked, "passed_after_remove": passed == [True]}


def recipe_double_barrier(p):
    n = 3
    lock = threading.Lock()
    arrived = [0]
    seen_at_enter = []
    left = [0]
    seen_at_leave = []

    def member(i):
        c = client(i)
        db = c.DoubleBarrier(p, n, "m%d" % i)
        with lock:
            arrived[0] += 1
        db.enter()
        with lock:
            seen_at_enter.append(arrived[0])
        time.sleep(0.1 * i)
        with lock:
            left[0] += 1
        db.leave()
        with lock:
            seen_at_leave.append(left[0])

    finished = threads([lambda i=i: member(i) for i in range(n)])
    return {"finished": finished, "arrived_when_entered": seen_at_enter, "leaving_when_left": seen_at_leave}


def recipe_queue(p):
    a, b = client(0), client(1)
    qa = a.Queue(p)
    for v in [b"first", b"second", b"third"]:
        qa.put(v)
    qa.put(b"urgent", priority=1)
    qb = b.Queue(p)
    b.sync(p)
    got = [qb.get() for _ in range(4)]
    return {"got": [g.decode() if g else None for g in got], "empty_after": qb.get() is None}


def recipe_locking_queue(p):
    a, b = client(0), client(1)
    qa, qb = a.LockingQueue(p), b.LockingQueue(p)
    qa.put_all([b"x", b"y"])
    b.sync(p)
    first = qb.get(timeout=10)
    # While b holds "x" locked, a gets the next one, not "x".
    second = qa.get(timeout=10)
    # b gives "x" back unconsumed; a consumes "y" and then gets "x".
    released = qb.release()
    consumed_second = qa.consume()
    again = qa.get(timeout=10)
    consumed_again = qa.consume()
    a.sync(p)
    return {
        "first": first.decode(),
        "second_while_first_locked": second.decode(),
        "released": released,
        "consumed": consumed_second and consumed_again,
        "after_release": again.decode(),
        "left": len(qa),
    }


def recipe_party(p):
    members = [client(i).Party(p, "member-%d" % i) for i in range(3)]
    for m in members:
        m.join()
    observer = client(1).Party(p)
    observer.client.sync(p)
    joined = sorted(observer)
    members[0].leave()
    observer.client.sync(p)
    after_leave = sorted(observer)
    for m in members[1:]:
        m.leave()
    return {"joined": joined, "after_leave": after_leave, "count": len(joined)}


def recipe_tree_cache(p):
    a, b = client(0), client(1)
    a.ensure_path(p)
    cache = TreeCache(b, p)
    events = []
    cond = threading.Condition()
    names = {TreeEvent.NODE_ADDED: "NODE_ADDED", TreeEvent.NODE_UPDATED: "NODE_UPDATED", TreeEvent.NODE_REMOVED: "NODE_REMOVED"}

    initialized = threading.Event()

    def listener(event):
        if event.event_type == TreeEvent.INITIALIZED:
            initialized.set()
        if event.event_type in names and event.event_data.path != p:
            with cond:
                data = event.event_data.data
                events.append([names[event.event_type], event.event_data.path, data.decode() if data else ""])
                cond.notify_all()

    def until(count):
        with cond:
            return cond.wait_for(lambda: len(events) >= count, timeout=20)

    cache.listen(listener)
    cache.start()
    initialized.wait(20)
    # Each write through front end a waits for the event at front end b before the next one.
    a.create(p + "/x", b"one")
    until(1)
    a.set(p + "/x", b"two")
    until(2)
    a.create(p + "/x/y", b"deep")
    until(3)
    a.delete(p + "/x", recursive=True)
    until(5)
    cache.close()
    return {"events": events}


def recipe_counter(p):
    cs = [client(i) for i in range(4)]

    def bump(c):
        counter = c.Counter(p)
        for _ in range(25):
            counter += 1

    finished = threads([lambda c=c: bump(c) for c in cs])
    cs[0].sync(p)
    return {"finished": finished, "value": cs[0].Counter(p).value}


def recipe_election(p):
    inside = Inside()
    lock = threading.Lock()
    leaders = []
    contenders_seen = []

    def contend(i):
        c = client(i)
        e = c.Election(p, "c%d" % i)

        def lead():
            with inside:
                with lock:
                    before = len(leaders)
                    leaders.append("c%d" % i)
                # The contenders still queued behind this leader (the first waits for all to join).
                deadline = time.time() + 20
                while len(e.contenders()) != 3 - before and time.time() < deadline:
                    time.sleep(0.05)
                with lock:
                    contenders_seen.append(len(e.contenders()))
                time.sleep(0.3)

        e.run(lead)

    finished = threads([lambda i=i: contend(i) for i in range(3)])
    return {"finished": finished, "leaders": sorted(leaders), "most_leaders_at_once": inside.most, "contenders_seen": contenders_seen}


def recipe_transaction(p):
    a, b = client(0), client(1)
    a.create(p + "/base", b"v0", makepath=True)
    tx = a.transaction()
    tx.create(p + "/t1", b"one")
    tx.set_data(p + "/base", b"v1", version=0)
    tx.check(p + "/base", 1)
    tx.create(p + "/t2", b"two")
    tx.delete(p + "/t2")
    ok = [r if isinstance(r, (str, bool)) else type(r).__name__ for r in tx.commit()]
    b.sync(p)
    failing = b.transaction()
    failing.create(p + "/t3", b"three")
    failing.check(p + "/base", 0)
    failed = [r if isinstance(r, (str, bool)) else type(r).__name__ for r in failing.commit()]
    a.sync(p)
    return {
        "ok": ok,
        "failed": failed,
        "base": [a.get(p + "/base")[0].decode(), a.get(p + "/base")[1].version],
        "children": sorted(a.get_children(p)),
    }


def recipe_acl(p):
    owner = client(0, auth=[("digest", "alice:secret")])
    acl = make_digest_acl("alice", "secret", all=True)
    owner.create(p, b"private", acl=[acl], makepath=True)
    authed = client(1, auth=[("digest", "alice:secret")])
    authed.sync(p)
    out = {"authed_read": authed.get(p)[0].decode()}
    for name, auth in [("unauthed", None), ("wrong_password", [("digest", "alice:nope")])]:
        c = client(1, auth=auth)
        c.sync(p)
        try:
            c.get(p)
            out[name] = "read"
        except NoAuthError:
            out[name] = "NoAuthError"
        try:
            c.set(p, b"mine")
            out[name + "_write"] = "written"
        except NoAuthError:
            out[name + "_write"] = "NoAuthError"
    out["acl_read_back"] = [[a.perms, a.id.scheme, a.id.id] for a in authed.get_acls(p)[0]]
    out["expected_acl"] = [[acl.perms, acl.id.scheme, acl.id.id]]
    return out


def recipe_lease(p):
    a, b = client(0), client(1)
    period = datetime.timedelta(seconds=2)
    got_a = bool(a.NonBlockingLease(p, period, identifier="a"))
    b.sync(p)
    refused_b = not bool(b.NonBlockingLease(p, period, identifier="b"))
    renewed_a = bool(a.NonBlockingLease(p, period, identifier="a"))
    # The lease is the writers' wall clocks: past its end (whole seconds), b gets it.
    time.sleep(3.2)
    b.sync(p)
    got_b = bool(b.NonBlockingLease(p, period, identifier="b"))
    return {"a_obtains": got_a, "b_refused": refused_b, "a_renews": renewed_a, "b_after_end": got_b}


def recipe_partitioner(p):
    items = list(range(1, 7))
    stop = threading.Event()
    lock = threading.Lock()
    held = {}

    def member(i):
        c = client(i)
        part = c.SetPartitioner(path=p, set=items, identifier="p%d" % i, time_boundary=1)
        while not stop.is_set():
            if part.failed:
                break
            elif part.release:
                with lock:
                    held.pop(i, None)
                part.release_set()
            elif part.acquired:
                with lock:
                    held[i] = sorted(part)
                part.state_change_event.wait(0.1)
                part.state_change_event.clear()
            elif part.allocating:
                part.wait_for_acquire(0.1)
        part.finish()

    ts = [threading.Thread(target=member, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    deadline = time.time() + 60
    result = None
    while time.time() < deadline:
        with lock:
            if len(held) == 2:
                parts = [held[0], held[1]]
                if sorted(parts[0] + parts[1]) == items:
                    result = parts
                    break
        time.sleep(0.1)
    stop.set()
    for t in ts:
        t.join(30)
    return {"parts": result, "items": items}


RECIPES = [
    ("Lock", recipe_lock),
    ("ReadLock/WriteLock", recipe_rwlock),
    ("Semaphore", recipe_semaphore),
    ("Barrier", recipe_barrier),
    ("DoubleBarrier", recipe_double_barrier),
    ("Queue", recipe_queue),
    ("LockingQueue", recipe_locking_queue),
    ("Party", recipe_party),
    ("TreeCache", recipe_tree_cache),
    ("Counter", recipe_counter),
    ("Election", recipe_election),
    ("transaction", recipe_transaction),
    ("digest ACL", recipe_acl),
    ("NonBlockingLease", recipe_lease),
    ("SetPartitioner", recipe_partitioner),
]

only = set(sys.argv[4:])
for n, (name, run) in enumerate(RECIPES):
    if only and name not in only:
        continue
    try:
        say(dict(run("%s/r%d" % (root, n)), recipe=name))
    except Exception as e:  # one recipe's failure is its own line; the others still run
        say({"recipe": name, "error": "%s: %s" % (type(e).__name__, e), "trace": traceback.format_exc()})
    finally:
        while opened:
            c = opened.pop()
            try:
                c.stop()
                c.close()
            except Exception:
                pass
say({"done": True})
