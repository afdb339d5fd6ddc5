// Curator's LeaderLatch failover, for bench/leader.ts. Usage: java CuratorLeaderBench <sessionTimeoutMs>
// Reads commands on stdin, answers on stdout (one line each); exits when stdin closes.
//
//   close <connect> <path> <rounds> <warmup>   two participants (own sessions) on <connect>; each
//                                              round closes the leader and times until the other's
//                                              isLeader; the closed one rejoins at the back
//                                              -> "close [ms,ms,...]" (after <warmup> untimed rounds)
//   join <id> <connect> <path>                 a participant through <connect> (a fault proxy)
//                                              -> "joined <id>"; later "isLeader <id>" when it leads
//   drop <id>                                  forget a participant (its client closes in the
//                                              background: its connection is blackholed)
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorLeaderBench {
  static int sessionMs;
  static final Map<String, CuratorFramework> clients = new ConcurrentHashMap<>();

  static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  static CuratorFramework client(String connect) throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.builder()
        .connectString(connect)
        .sessionTimeoutMs(sessionMs)
        .connectionTimeoutMs(5000)
        .retryPolicy(new ExponentialBackoffRetry(20, 10, 500))
        .build();
    c.start();
    if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) throw new IllegalStateException("not connected");
    return c;
  }

  /** A started latch whose isLeader stores System.nanoTime() in `ledAt` and counts `led` down. */
  static LeaderLatch latch(CuratorFramework c, String path, String id, AtomicLong ledAt, CountDownLatch[] led) throws Exception {
    LeaderLatch l = new LeaderLatch(c, path, id);
    l.addListener(new LeaderLatchListener() {
      @Override
      public void isLeader() {
        ledAt.set(System.nanoTime());
        led[0].countDown();
      }

      @Override
      public void notLeader() {}
    });
    l.start();
    return l;
  }

  static void close(String connect, String path, int rounds, int warmup) throws Exception {
    CuratorFramework[] cs = { client(connect), client(connect) };
    AtomicLong[] ledAt = { new AtomicLong(), new AtomicLong() };
    CountDownLatch[][] led = { { new CountDownLatch(1) }, { new CountDownLatch(1) } };
    LeaderLatch[] ls = new LeaderLatch[2];
    ls[0] = latch(cs[0], path, "a", ledAt[0], led[0]);
    if (!led[0][0].await(10, TimeUnit.SECONDS)) throw new IllegalStateException("no leader");
    ls[1] = latch(cs[1], path, "b", ledAt[1], led[1]);
    Thread.sleep(200); // b has joined and watches a
    int leader = 0;
    StringBuilder out = new StringBuilder("[");
    for (int r = 0; r < warmup + rounds; r++) {
      int follower = 1 - leader;
      long t0 = System.nanoTime();
      ls[leader].close();
      if (!led[follower][0].await(10, TimeUnit.SECONDS)) throw new IllegalStateException("no failover");
      double ms = (ledAt[follower].get() - t0) / 1e6;
      if (r >= warmup) out.append(r > warmup ? "," : "").append(String.format("%.3f", ms));
      // The old leader rejoins at the back.
      led[leader][0] = new CountDownLatch(1);
      ls[leader] = latch(cs[leader], path, leader == 0 ? "a" : "b", ledAt[leader], led[leader]);
      Thread.sleep(150);
      led[follower][0] = new CountDownLatch(1);
      leader = follower;
    }
    for (LeaderLatch l : ls) l.close();
    for (CuratorFramework c : cs) c.close();
    say("close " + out.append(']'));
  }

  public static void main(String[] args) throws Exception {
    sessionMs = Integer.parseInt(args[0]);
    say("ready");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] a = line.trim().split(" ");
      if (a.length == 0 || a[0].isEmpty()) continue;
      try {
        switch (a[0]) {
          case "close": close(a[1], a[2], Integer.parseInt(a[3]), Integer.parseInt(a[4])); break;
          case "join": {
            String id = a[1];
            CuratorFramework c = client(a[2]);
            clients.put(id, c);
            LeaderLatch l = new LeaderLatch(c, a[3], id);
            l.addListener(new LeaderLatchListener() {
              @Override
              public void isLeader() {
                say("isLeader " + id);
              }

              @Override
              public void notLeader() {}
            });
            l.start();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (l.getOurPath() == null && System.nanoTime() < until) Thread.sleep(2);
            say("joined " + id);
            break;
          }
          case "drop": {
            CuratorFramework c = clients.remove(a[1]);
            if (c != null) new Thread(c::close).start();
            say("dropped " + a[1]);
            break;
          }
          default: say("error unknown command " + a[0]);
        }
      } catch (Exception e) {
        say("error " + e);
      }
    }
    System.exit(0);
  }
}
