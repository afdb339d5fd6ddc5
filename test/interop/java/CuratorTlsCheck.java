// Apache Curator over TLS (ZooKeeper's Netty client socket, configured by the zookeeper.ssl.*
// system properties) against the embedded server's TLS listener, driven line by line from
// test/interop/tls-java.slow.test.ts. Reads commands on stdin, answers one line each; exits on EOF.
//
//   whoami                                   -> "whoami <scheme>:<user> ..." (the connection's identities)
//   crud <path>                              create <path> "one", get, set "two", get, delete, exists
//                                            -> "crud <get1> <get2> <exists after delete>"
//   count <lockPath> <counterPath> <workers> <n>
//                                            each of <workers> CuratorFrameworks does <n> unsafe
//                                            read-modify-write increments inside an InterProcessMutex
//                                            -> "counted <final value> <most holders at once>"
// Errors answer "error <message>".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.data.ClientInfo;

public class CuratorTlsCheck {
  static String connect;

  static CuratorFramework newClient() throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.builder()
        .connectString(connect)
        .sessionTimeoutMs(10000)
        .connectionTimeoutMs(10000)
        .retryPolicy(new ExponentialBackoffRetry(20, 10, 500))
        .build();
    c.start();
    if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) throw new IllegalStateException("not connected");
    return c;
  }

  static String text(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }

  public static void main(String[] args) throws Exception {
    connect = args[0];
    CuratorFramework shared = newClient();
    System.out.println("ready");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] a = line.trim().split(" ");
      try {
        switch (a[0]) {
          case "whoami": {
            StringBuilder sb = new StringBuilder("whoami");
            for (ClientInfo i : shared.getZookeeperClient().getZooKeeper().whoAmI()) sb.append(' ').append(i.getAuthScheme()).append(':').append(i.getUser());
            System.out.println(sb);
            break;
          }
          case "crud": {
            String p = a[1];
            shared.create().creatingParentsIfNeeded().forPath(p, "one".getBytes(StandardCharsets.UTF_8));
            String g1 = text(shared.getData().forPath(p));
            shared.setData().forPath(p, "two".getBytes(StandardCharsets.UTF_8));
            String g2 = text(shared.getData().forPath(p));
            shared.delete().forPath(p);
            System.out.println("crud " + g1 + " " + g2 + " " + (shared.checkExists().forPath(p) != null));
            break;
          }
          case "count": {
            String lockPath = a[1], counter = a[2];
            int workers = Integer.parseInt(a[3]), n = Integer.parseInt(a[4]);
            if (shared.checkExists().forPath(counter) == null) shared.create().forPath(counter, "0".getBytes(StandardCharsets.UTF_8));
            AtomicInteger holders = new AtomicInteger(), most = new AtomicInteger();
            List<Thread> threads = new ArrayList<>();
            List<Exception> failures = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
              Thread t = new Thread(() -> {
                try (CuratorFramework c = newClient()) {
                  InterProcessMutex m = new InterProcessMutex(c, lockPath);
                  for (int i = 0; i < n; i++) {
                    m.acquire();
                    try {
                      most.accumulateAndGet(holders.incrementAndGet(), Math::max);
                      int v = Integer.parseInt(text(c.getData().forPath(counter)));
                      c.setData().forPath(counter, String.valueOf(v + 1).getBytes(StandardCharsets.UTF_8));
                      holders.decrementAndGet();
                    } finally {
                      m.release();
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
            System.out.println("counted " + text(shared.getData().forPath(counter)) + " " + most.get());
            break;
          }
          default:
            System.out.println("error unknown command " + a[0]);
        }
      } catch (Exception e) {
        System.out.println("error " + e);
      }
      System.out.flush();
    }
    shared.close();
    System.exit(0);
  }
}
