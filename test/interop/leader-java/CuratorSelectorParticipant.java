// Apache Curator's LeaderSelector driven line by line from a test, for Tenure's selector interop suite.
//
// Compiled by test/interop/java.ts against Debian's libcurator-recipes-java (Curator 5.4). Each
// participant has its own CuratorFramework (its own session) and an autoRequeue LeaderSelector whose
// takeLeadership holds leadership until told to yield (or interrupted). Reads commands on stdin,
// answers on stdout (one line each); closes everything and exits when stdin closes.
//
//   join <id> <path>        start a LeaderSelector with this id; answers once our node is listed -> "joined <id>"
//   status <id>             hasLeadership                                  -> "status <id> <true|false>"
//   leader <id>             getLeader() as this participant sees it        -> "leader <id> <leaderId|-> <isLeader>"
//   participants <id>       getParticipants() in order                     -> "participants <id> <id1>,<id2>,..."
//   yield <id>              takeLeadership returns (autoRequeue queues us again) -> "yielded <id>"
//   close <id>              selector.close() (interrupts takeLeadership), then the client -> "closed <id>"
// Events, as they happen: "isLeader <id>" as takeLeadership starts, "notLeader <id>" as it returns.
// Errors answer "error <id> <message>".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorSelectorParticipant {
  static String connect;
  static int sessionTimeoutMs;
  static final Map<String, CuratorFramework> clients = new ConcurrentHashMap<>();
  static final Map<String, LeaderSelector> selectors = new ConcurrentHashMap<>();
  /** One permit ends the current term of that participant. */
  static final Map<String, Semaphore> yields = new ConcurrentHashMap<>();

  static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  static List<String> ids(LeaderSelector s) throws Exception {
    List<String> ids = new ArrayList<>();
    for (Participant p : s.getParticipants()) ids.add(p.getId());
    return ids;
  }

  static void join(String id, String path) throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.builder()
        .connectString(connect)
        .sessionTimeoutMs(sessionTimeoutMs)
        .connectionTimeoutMs(5000)
        .retryPolicy(new ExponentialBackoffRetry(20, 10, 500))
        .build();
    c.start();
    if (!c.blockUntilConnected(10, TimeUnit.SECONDS)) throw new IllegalStateException("not connected");
    Semaphore yielded = new Semaphore(0);
    LeaderSelector selector = new LeaderSelector(c, path, new LeaderSelectorListenerAdapter() {
      @Override
      public void takeLeadership(CuratorFramework client) throws Exception {
        say("isLeader " + id);
        try {
          yielded.acquire();
        } finally {
          say("notLeader " + id);
        }
      }
    });
    selector.setId(id);
    selector.autoRequeue();
    clients.put(id, c);
    selectors.put(id, selector);
    yields.put(id, yielded);
    selector.start();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!ids(selector).contains(id) && System.nanoTime() < until) Thread.sleep(2);
    say("joined " + id);
  }

  public static void main(String[] args) throws Exception {
    connect = args[0];
    sessionTimeoutMs = Integer.parseInt(args[1]);
    say("ready");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] a = line.trim().split(" ");
      if (a.length == 0 || a[0].isEmpty()) continue;
      String id = a.length > 1 ? a[1] : "-";
      try {
        switch (a[0]) {
          case "join": join(id, a[2]); break;
          case "status": say("status " + id + " " + selectors.get(id).hasLeadership()); break;
          case "leader": {
            Participant p = selectors.get(id).getLeader();
            say("leader " + id + " " + (p.getId().isEmpty() ? "-" : p.getId()) + " " + p.isLeader());
            break;
          }
          case "participants": say("participants " + id + " " + String.join(",", ids(selectors.get(id)))); break;
          case "yield": yields.get(id).release(); say("yielded " + id); break;
          case "close": {
            LeaderSelector s = selectors.remove(id);
            if (s != null) s.close();
            CuratorFramework c = clients.remove(id);
            if (c != null) c.close();
            say("closed " + id);
            break;
          }
          default: say("error " + id + " unknown command " + a[0]);
        }
      } catch (Exception e) {
        say("error " + id + " " + e);
      }
    }
    for (LeaderSelector s : selectors.values()) {
      try { s.close(); } catch (Exception e) { /* closing anyway */ }
    }
    for (CuratorFramework c : clients.values()) c.close();
    System.exit(0);
  }
}
