// Apache Curator's LeaderLatch driven line by line from a test, for Tenure's leader interop suite.
//
// Compiled by test/interop/java.ts against Debian's libcurator-recipes-java (Curator 5.4). Each
// participant has its own CuratorFramework (its own session). Reads commands on stdin, answers on
// stdout (one line each); closes everything and exits when stdin closes.
//
//   join <id> <latchPath>   start a LeaderLatch with this id          -> "joined <id> <ourPath>"
//   status <id>             hasLeadership and our node                -> "status <id> <true|false> <ourPath>"
//   leader <id>             getLeader() as this participant sees it   -> "leader <id> <leaderId|-> <isLeader>"
//   participants <id>       getParticipants() in order                -> "participants <id> <id1>,<id2>,..."
//   close <id>              latch.close(), then the client            -> "closed <id>"
//   halt                    Runtime.halt: the JVM dies at once, like kill -9 (no close, no closeSession)
// Events, as they happen:
//   "isLeader <id> <ourPath> <czxid of ourPath>"   and   "notLeader <id>"
// Errors answer "error <id> <message>".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.data.Stat;

public class CuratorLeaderParticipant {
  static String connect;
  static int sessionTimeoutMs;
  static final Map<String, CuratorFramework> clients = new ConcurrentHashMap<>();
  static final Map<String, LeaderLatch> latches = new ConcurrentHashMap<>();

  static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
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
    LeaderLatch latch = new LeaderLatch(c, path, id, LeaderLatch.CloseMode.NOTIFY_LEADER);
    latch.addListener(new LeaderLatchListener() {
      @Override
      public void isLeader() {
        String ours = latch.getOurPath();
        long czxid = -1;
        try {
          Stat s = c.checkExists().forPath(ours);
          if (s != null) czxid = s.getCzxid();
        } catch (Exception e) {
          // the czxid is informative only
        }
        say("isLeader " + id + " " + ours + " " + czxid);
      }

      @Override
      public void notLeader() {
        say("notLeader " + id);
      }
    });
    clients.put(id, c);
    latches.put(id, latch);
    latch.start();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (latch.getOurPath() == null && System.nanoTime() < until) Thread.sleep(2);
    say("joined " + id + " " + latch.getOurPath());
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
          case "status": {
            LeaderLatch l = latches.get(id);
            say("status " + id + " " + l.hasLeadership() + " " + l.getOurPath());
            break;
          }
          case "leader": {
            Participant p = latches.get(id).getLeader();
            say("leader " + id + " " + (p.getId().isEmpty() ? "-" : p.getId()) + " " + p.isLeader());
            break;
          }
          case "participants": {
            List<String> ids = new ArrayList<>();
            for (Participant p : latches.get(id).getParticipants()) ids.add(p.getId());
            say("participants " + id + " " + String.join(",", ids));
            break;
          }
          case "close": {
            LeaderLatch l = latches.remove(id);
            if (l != null) l.close();
            CuratorFramework c = clients.remove(id);
            if (c != null) c.close();
            say("closed " + id);
            break;
          }
          case "halt": Runtime.getRuntime().halt(137); break;
          default: say("error " + id + " unknown command " + a[0]);
        }
      } catch (Exception e) {
        say("error " + id + " " + e);
      }
    }
    for (LeaderLatch l : latches.values()) {
      try { l.close(); } catch (Exception e) { /* closing anyway */ }
    }
    for (CuratorFramework c : clients.values()) c.close();
    System.exit(0);
  }
}
