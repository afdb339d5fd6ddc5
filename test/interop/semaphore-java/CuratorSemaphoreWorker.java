// Apache Curator's InterProcessSemaphoreV2 on a SharedCount maximum, driven line by line from
// test/interop/semaphore-curator.zk.test.ts. Compiled by test/interop/java.ts against Debian's
// libcurator-recipes-java. Reads commands on stdin, answers on stdout; exits when stdin closes.
//
//   hold <id> <semPath> <countPath>                     acquire one lease and keep it
//                                                       -> "held <id> <node>"
//   try <id> <semPath> <countPath> <timeoutMs>          the same with a timeout
//                                                       -> "held <id> <node>" or "timeout <id>"
//   release <id>                                        -> "released <id>"
//   setcount <countPath> <n>                            SharedCount.setCount -> "count-set <n>"
//   churn <id> <semPath> <countPath> <insidePath> <clients> <n>
//       each of <clients> CuratorFrameworks takes a lease <n> times; while holding it, creates an
//       ephemeral node under <insidePath> and counts that folder's children (everyone holding a
//       lease, Tenure's too) -> "churned <id> <most seen>"
// Errors answer "error <id> <message>".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;

public class CuratorSemaphoreWorker {
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

  /** A started SharedCount; Curator's semaphore reads it at construction, then follows its changes. */
  static SharedCount count(CuratorFramework c, String path) throws Exception {
    SharedCount n = new SharedCount(c, path, 1);
    n.start();
    return n;
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
          case "hold": start(() -> hold(a[1], a[2], a[3], -1), a[1]); break;
          case "try": start(() -> hold(a[1], a[2], a[3], Long.parseLong(a[4])), a[1]); break;
          case "release": {
            CountDownLatch l = releases.get(a[1]);
            if (l == null) say("error " + a[1] + " nothing held");
            else l.countDown();
            break;
          }
          case "setcount": {
            try (SharedCount n = count(shared, a[1])) {
              n.setCount(Integer.parseInt(a[2]));
            }
            say("count-set " + a[2]);
            break;
          }
          case "churn": start(() -> churn(a[1], a[2], a[3], a[4], Integer.parseInt(a[5]), Integer.parseInt(a[6])), a[1]); break;
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

  static void hold(String id, String semPath, String countPath, long timeoutMs) throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    releases.put(id, release);
    try (SharedCount n = count(shared, countPath)) {
      InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(shared, semPath, n);
      Lease lease = timeoutMs < 0 ? semaphore.acquire() : semaphore.acquire(timeoutMs, TimeUnit.MILLISECONDS);
      if (lease == null) { releases.remove(id); say("timeout " + id); return; }
      say("held " + id + " " + lease.getNodeName());
      release.await();
      lease.close();
    }
    releases.remove(id);
    say("released " + id);
  }

  static void churn(String id, String semPath, String countPath, String insidePath, int clients, int times) throws Exception {
    AtomicInteger most = new AtomicInteger();
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = new ArrayList<>();
    for (int i = 0; i < clients; i++) {
      Thread th = new Thread(() -> {
        try (CuratorFramework c = newClient(); SharedCount n = count(c, countPath)) {
          InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(c, semPath, n);
          for (int k = 0; k < times; k++) {
            Lease lease = semaphore.acquire();
            try {
              String mine = c.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(insidePath + "/in-");
              most.accumulateAndGet(c.getChildren().forPath(insidePath).size(), Math::max);
              Thread.sleep(ThreadLocalRandom.current().nextInt(4));
              c.delete().forPath(mine);
            } finally {
              lease.close();
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
    if (!failures.isEmpty()) throw new Exception("churn failed: " + failures.get(0), failures.get(0));
    say("churned " + id + " " + most.get());
  }
}
