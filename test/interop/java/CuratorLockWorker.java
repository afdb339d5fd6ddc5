// Apache Curator's lock recipes driven line by line from a test, for Tenure's interop suites.
//
// Compiled by test/interop/java.ts against Debian's libcurator-recipes-java. Reads commands on
// stdin, answers on stdout (one line each); exits when stdin closes.
//
//   count <id> <lockPath> <counterPath> <clients> <n> [tokens]
//                                                     each of <clients> CuratorFrameworks does <n>
//                                                     unsafe read-modify-write increments of
//                                                     <counterPath> inside an InterProcessMutex
//                                                     -> "counted <id> <total>"; with "tokens", first
//                                                     per hold "token <id> <valueRead> <czxid of the
//                                                     lock node>" (its fencing token)
//   hold <id> <kind> <path> [max]                      acquire and keep (kind: mutex, read, write,
//                                                     smutex, semaphore) -> "held <id> <node>"
//   try <id> <kind> <path> <timeoutMs> [max]           the same with a timeout
//                                                     -> "held <id> <node>" or "timeout <id>"
//   revocable <id> <path>                              hold a mutex made revocable: a revocation
//                                                     releases it -> "held", later "revoked <id>"
//   release <id>                                       -> "released <id>"
//   revoke <nodePath>                                  Revoker.attemptRevoke -> "revoke-sent"
//   participants <path>                                -> "participants <name>,<name>,..."
//   write <path> <data>                                create (with parents) or setData -> "wrote <path>"
//   read <path>                                        sync, then getData -> "read <path> <data>"
// Errors answer "error <id> <message>".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.data.Stat;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorLockWorker {
  static String connect;
  static CuratorFramework shared;
  static final Map<String, CountDownLatch> releases = new ConcurrentHashMap<>();

  static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  static CuratorFramework newClient() throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.builder()
        .connectString(connect)
        .sessionTimeoutMs(4000)
        .connectionTimeoutMs(5000)
        .retryPolicy(new ExponentialBackoffRetry(20, 10, 500))
        .build();
    c.start();
    if (!c.blockUntilConnected(10, TimeUnit.SECONDS)) throw new IllegalStateException("not connected");
    return c;
  }

  /** InterProcessMutex.getLockPath is protected in Curator 5.4; read it for the holding thread. */
  static String lockPath(InterProcessMutex m) throws Exception {
    Method get = InterProcessMutex.class.getDeclaredMethod("getLockPath");
    get.setAccessible(true);
    return (String) get.invoke(m);
  }

  public static void main(String[] args) throws Exception {
    connect = args[0];
    shared = newClient();
    say("ready");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] a = line.trim().split(" ");
      if (a.length == 0 || a[0].isEmpty()) continue;
      try {
        switch (a[0]) {
          case "count": start(() -> count(a[1], a[2], a[3], Integer.parseInt(a[4]), Integer.parseInt(a[5]), a.length > 6 && a[6].equals("tokens")), a[1]); break;
          case "hold": start(() -> hold(a[1], a[2], a[3], -1, a.length > 4 ? Integer.parseInt(a[4]) : 1, false), a[1]); break;
          case "try": start(() -> hold(a[1], a[2], a[3], Long.parseLong(a[4]), a.length > 5 ? Integer.parseInt(a[5]) : 1, false), a[1]); break;
          case "revocable": start(() -> hold(a[1], "mutex", a[2], -1, 1, true), a[1]); break;
          case "release": {
            CountDownLatch l = releases.get(a[1]);
            if (l == null) say("error " + a[1] + " nothing held");
            else l.countDown();
            break;
          }
          case "revoke": Revoker.attemptRevoke(shared, a[1]); say("revoke-sent"); break;
          case "participants": say("participants " + String.join(",", new ArrayList<>(new InterProcessMutex(shared, a[1]).getParticipantNodes()))); break;
          case "write": write(a[1], a[2]); break;
          case "read": read(a[1]); break;
          case "quit": System.exit(0); break;
          default: say("error - unknown command " + a[0]);
        }
      } catch (Exception e) {
        say("error - " + e);
      }
    }
    System.exit(0);
  }

  interface Task { void run() throws Exception; }

  static void start(Task t, String id) {
    Thread th = new Thread(() -> {
      try {
        t.run();
      } catch (Throwable e) {
        say("error " + id + " " + e.toString().replace('\n', ' '));
      }
    });
    th.setDaemon(true);
    th.start();
  }

  static void write(String path, String text) throws Exception {
    byte[] data = text.getBytes(StandardCharsets.UTF_8);
    if (shared.checkExists().forPath(path) == null) shared.create().creatingParentsIfNeeded().forPath(path, data);
    else shared.setData().forPath(path, data);
    say("wrote " + path);
  }

  /** ZooKeeper's sync through the shared session first: the read sees every write committed before it. */
  static void read(String path) throws Exception {
    CountDownLatch synced = new CountDownLatch(1);
    shared.getZookeeperClient().getZooKeeper().sync(path, (rc, p, ctx) -> synced.countDown(), null);
    if (!synced.await(10, TimeUnit.SECONDS)) throw new IllegalStateException("sync timed out");
    say("read " + path + " " + new String(shared.getData().forPath(path), StandardCharsets.UTF_8));
  }

  static void count(String id, String lockPath, String counterPath, int clients, int n, boolean tokens) throws Exception {
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = new ArrayList<>();
    for (int i = 0; i < clients; i++) {
      Thread th = new Thread(() -> {
        try (CuratorFramework c = newClient()) {
          InterProcessMutex m = new InterProcessMutex(c, lockPath);
          for (int k = 0; k < n; k++) {
            m.acquire();
            try {
              int v = Integer.parseInt(new String(c.getData().forPath(counterPath), StandardCharsets.UTF_8));
              if (tokens) {
                Stat node = c.checkExists().forPath(lockPath(m));
                say("token " + id + " " + v + " " + (node == null ? -1 : node.getCzxid()));
              }
              Thread.yield();
              c.setData().forPath(counterPath, Integer.toString(v + 1).getBytes(StandardCharsets.UTF_8));
            } finally {
              m.release();
            }
          }
        } catch (Throwable e) {
          synchronized (failures) { failures.add(e); }
        }
      });
      threads.add(th);
      th.start();
    }
    for (Thread th : threads) th.join();
    if (!failures.isEmpty()) throw new Exception("count failed: " + failures.get(0), failures.get(0));
    say("counted " + id + " " + (clients * n));
  }

  static void hold(String id, String kind, String path, long timeoutMs, int max, boolean revocable) throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    releases.put(id, release);
    InterProcessLock lock = null;
    InterProcessSemaphoreV2 semaphore = null;
    Lease lease = null;
    String node;
    switch (kind) {
      case "mutex": {
        InterProcessMutex m = new InterProcessMutex(shared, path);
        if (revocable) m.makeRevocable(x -> { say("revoked " + id); release.countDown(); });
        lock = m;
        break;
      }
      case "read": lock = new InterProcessReadWriteLock(shared, path).readLock(); break;
      case "write": lock = new InterProcessReadWriteLock(shared, path).writeLock(); break;
      case "smutex": lock = new InterProcessSemaphoreMutex(shared, path); break;
      case "semaphore": semaphore = new InterProcessSemaphoreV2(shared, path, max); break;
      default: throw new IllegalArgumentException("kind " + kind);
    }
    if (semaphore != null) {
      lease = timeoutMs < 0 ? semaphore.acquire() : semaphore.acquire(timeoutMs, TimeUnit.MILLISECONDS);
      if (lease == null) { releases.remove(id); say("timeout " + id); return; }
      node = lease.getNodeName();
    } else {
      boolean got = true;
      if (timeoutMs < 0) lock.acquire();
      else got = lock.acquire(timeoutMs, TimeUnit.MILLISECONDS);
      if (!got) { releases.remove(id); say("timeout " + id); return; }
      node = lock instanceof InterProcessMutex ? lockPath((InterProcessMutex) lock) : "-";
    }
    say("held " + id + " " + node);
    release.await();
    if (lease != null) lease.close();
    else lock.release();
    releases.remove(id);
    say("released " + id);
  }
}
