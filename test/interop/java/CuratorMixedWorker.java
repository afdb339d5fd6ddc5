// Apache Curator beside Tenure on one namespace, driven line by line from a test: counted
// increments inside an InterProcessMutex that report each holder's fencing token, and plain
// reads and writes. Compiled by test/interop/java.ts against Debian's libcurator-recipes-java.
// Reads commands on stdin, answers on stdout (one line each); exits when stdin closes.
//
//   count <id> <lockPath> <counterPath> <clients> <n>  each of <clients> CuratorFrameworks does <n>
//                                                     unsafe read-modify-write increments of
//                                                     <counterPath> inside an InterProcessMutex;
//                                                     per hold "token <id> <valueRead> <czxid of
//                                                     the lock node>", then "counted <id> <total>"
//   write <path> <data>                                create (with parents) or setData
//                                                     -> "wrote <path>"
//   read <path>                                        sync, then getData -> "read <path> <data>"
// Errors answer "error <id> <message>".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.data.Stat;

public class CuratorMixedWorker {
  static String connect;
  static CuratorFramework shared;

  static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  static CuratorFramework newClient() throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.builder()
        .connectString(connect)
        .sessionTimeoutMs(10000)
        .connectionTimeoutMs(5000)
        .retryPolicy(new ExponentialBackoffRetry(20, 10, 500))
        .build();
    c.start();
    if (!c.blockUntilConnected(15, TimeUnit.SECONDS)) throw new IllegalStateException("not connected");
    return c;
  }

  /** InterProcessMutex.getLockPath is protected in Curator 5.4; read it for the holding thread. */
  static String lockPath(InterProcessMutex m) throws Exception {
    Method get = InterProcessMutex.class.getDeclaredMethod("getLockPath");
    get.setAccessible(true);
    return (String) get.invoke(m);
  }

  static void sync(CuratorFramework c, String path) throws Exception {
    CountDownLatch done = new CountDownLatch(1);
    c.getZookeeperClient().getZooKeeper().sync(path, (rc, p, ctx) -> done.countDown(), null);
    if (!done.await(10, TimeUnit.SECONDS)) throw new IllegalStateException("sync timed out");
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
          case "count": {
            Thread th = new Thread(() -> {
              try {
                count(a[1], a[2], a[3], Integer.parseInt(a[4]), Integer.parseInt(a[5]));
              } catch (Throwable e) {
                say("error " + a[1] + " " + e.toString().replace('\n', ' '));
              }
            });
            th.setDaemon(true);
            th.start();
            break;
          }
          case "write": {
            byte[] data = a[2].getBytes(StandardCharsets.UTF_8);
            if (shared.checkExists().forPath(a[1]) == null) shared.create().creatingParentsIfNeeded().forPath(a[1], data);
            else shared.setData().forPath(a[1], data);
            say("wrote " + a[1]);
            break;
          }
          case "read":
            sync(shared, a[1]);
            say("read " + a[1] + " " + new String(shared.getData().forPath(a[1]), StandardCharsets.UTF_8));
            break;
          default: say("error - unknown command " + a[0]);
        }
      } catch (Exception e) {
        say("error - " + e.toString().replace('\n', ' '));
      }
    }
    System.exit(0);
  }

  static void count(String id, String lockPath, String counterPath, int clients, int n) throws Exception {
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = new ArrayList<>();
    for (int i = 0; i < clients; i++) {
      Thread th = new Thread(() -> {
        try (CuratorFramework c = newClient()) {
          InterProcessMutex m = new InterProcessMutex(c, lockPath);
          for (int k = 0; k < n; k++) {
            m.acquire();
            try {
              Stat node = c.checkExists().forPath(lockPath(m));
              int v = Integer.parseInt(new String(c.getData().forPath(counterPath), StandardCharsets.UTF_8));
              say("token " + id + " " + v + " " + (node == null ? -1 : node.getCzxid()));
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
}
