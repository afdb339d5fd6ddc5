// Apache Curator's InterProcessMutex and LeaderLatch, driven line by line from
// test/interop/curator-embedded.zk.test.ts against the embedded server's TCP listener.
//
// Compiled by test/interop/java.ts against Debian's libcurator-recipes-java. Reads commands on
// stdin, answers on stdout (one line each); exits when stdin closes.
//
//   count <lockPath> <counterPath> <workers> <n>   each of <workers> CuratorFrameworks (own session)
//                                                  does <n> unsafe read-modify-write increments of
//                                                  <counterPath> inside an InterProcessMutex
//                                                  -> "counted <final value> <most holders at once>"
//   latch <id> <path>                              starts a LeaderLatch with its own client
//                                                  -> "started <id>"; later "leader <id>" when it
//                                                  gains leadership, "not-leader <id>" when it loses it
//   has <id>                                       -> "has <id> true|false"
//   close <id>                                     closes the latch and its client -> "closed <id>"
// Errors answer "error <message>".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorEmbeddedCheck {
  static String connect;
  static final Map<String, LeaderLatch> latches = new ConcurrentHashMap<>();
  static final Map<String, CuratorFramework> latchClients = new ConcurrentHashMap<>();

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
    if (!c.blockUntilConnected(10, TimeUnit.SECONDS)) throw new IllegalStateException("not connected to " + connect);
    return c;
  }

  public static void main(String[] args) throws Exception {
    connect = args[0];
    say("ready");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] a = line.trim().split(" ");
      try {
        switch (a[0]) {
          case "count": count(a[1], a[2], Integer.parseInt(a[3]), Integer.parseInt(a[4])); break;
          case "latch": latch(a[1], a[2]); break;
          case "has": say("has " + a[1] + " " + latches.get(a[1]).hasLeadership()); break;
          case "close": {
            latches.remove(a[1]).close();
            latchClients.remove(a[1]).close();
            say("closed " + a[1]);
            break;
          }
          default: say("error unknown command " + a[0]);
        }
      } catch (Exception e) {
        say("error " + e);
      }
    }
    for (LeaderLatch l : latches.values()) l.close();
    for (CuratorFramework c : latchClients.values()) c.close();
    System.exit(0);
  }

  static void count(String lockPath, String counterPath, int workers, int n) throws Exception {
    List<CuratorFramework> clients = new ArrayList<>();
    for (int i = 0; i < workers; i++) clients.add(newClient());
    try {
      if (clients.get(0).checkExists().forPath(counterPath) == null) clients.get(0).create().creatingParentsIfNeeded().forPath(counterPath, "0".getBytes(StandardCharsets.UTF_8));
      AtomicInteger inside = new AtomicInteger();
      AtomicInteger most = new AtomicInteger();
      List<Thread> threads = new ArrayList<>();
      List<Exception> failures = new ArrayList<>();
      for (CuratorFramework c : clients) {
        Thread t = new Thread(() -> {
          InterProcessMutex mutex = new InterProcessMutex(c, lockPath);
          try {
            for (int i = 0; i < n; i++) {
              mutex.acquire();
              try {
                most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                // Unsafe on purpose: read, then write back + 1. Only the lock keeps it exact.
                int v = Integer.parseInt(new String(c.getData().forPath(counterPath), StandardCharsets.UTF_8));
                Thread.yield();
                c.setData().forPath(counterPath, String.valueOf(v + 1).getBytes(StandardCharsets.UTF_8));
                inside.decrementAndGet();
              } finally {
                mutex.release();
              }
            }
          } catch (Exception e) {
            synchronized (failures) { failures.add(e); }
          }
        });
        threads.add(t);
        t.start();
      }
      for (Thread t : threads) t.join();
      if (!failures.isEmpty()) throw failures.get(0);
      String v = new String(clients.get(0).getData().forPath(counterPath), StandardCharsets.UTF_8);
      say("counted " + v + " " + most.get());
    } finally {
      for (CuratorFramework c : clients) c.close();
    }
  }

  static void latch(String id, String path) throws Exception {
    CuratorFramework c = newClient();
    LeaderLatch latch = new LeaderLatch(c, path, id);
    latch.addListener(new LeaderLatchListener() {
      @Override public void isLeader() { say("leader " + id); }
      @Override public void notLeader() { say("not-leader " + id); }
    });
    latchClients.put(id, c);
    latches.put(id, latch);
    latch.start();
    say("started " + id);
  }
}
