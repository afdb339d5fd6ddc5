// Apache Curator's barriers driven line by line from a test, for Tenure's barrier interop suite.
//
// Compiled by test/interop/java.ts against Debian's libcurator-recipes-java (Curator 5.4). Each
// member has its own CuratorFramework (its own session). Reads commands on stdin, answers on
// stdout (one line each); closes everything and exits when stdin closes.
//
//   member <id> <path> <qty>   a DistributedDoubleBarrier on a new client    -> "member <id> <sessionIdHex> <passwdHex>"
//   enter <id> <timeoutMs>     enter(timeout) on a thread                     -> "entered <id> <true|false>" when it returns
//   leave <id> <timeoutMs>     leave(timeout) on a thread                     -> "left <id> <true|false>" when it returns
//   set <path>                 DistributedBarrier.setBarrier()                -> "set <path>"
//   remove <path>              DistributedBarrier.removeBarrier()             -> "removed <path>"
//   wait <path> <timeoutMs>    waitOnBarrier(timeout) on a thread             -> "waited <path> <true|false>" when it returns
//   close <id>                 closes the member's client                     -> "closed <id>"
// Errors answer "error <id> <message>" (a thread's too, when it throws).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorBarrierWorker {
  static String connect;
  static int sessionTimeoutMs;
  static CuratorFramework shared;
  static final Map<String, CuratorFramework> clients = new ConcurrentHashMap<>();
  static final Map<String, DistributedDoubleBarrier> members = new ConcurrentHashMap<>();

  static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  static CuratorFramework newClient() throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.builder()
        .connectString(connect)
        .sessionTimeoutMs(sessionTimeoutMs)
        .connectionTimeoutMs(5000)
        .retryPolicy(new ExponentialBackoffRetry(20, 10, 500))
        .build();
    c.start();
    if (!c.blockUntilConnected(10, TimeUnit.SECONDS)) throw new IllegalStateException("not connected");
    return c;
  }

  static String hex(byte[] bytes) {
    StringBuilder sb = new StringBuilder();
    for (byte b : bytes) sb.append(String.format("%02x", b));
    return sb.toString();
  }

  interface Call { String run() throws Exception; }

  /** Runs a blocking recipe call on its own thread and reports how it ended. */
  static void background(String id, Call call) {
    Thread t = new Thread(() -> {
      try {
        say(call.run());
      } catch (Exception e) {
        say("error " + id + " " + e);
      }
    });
    t.setDaemon(true);
    t.start();
  }

  public static void main(String[] args) throws Exception {
    connect = args[0];
    sessionTimeoutMs = Integer.parseInt(args[1]);
    shared = newClient();
    say("ready");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] a = line.trim().split(" ");
      if (a.length == 0 || a[0].isEmpty()) continue;
      String id = a.length > 1 ? a[1] : "-";
      try {
        switch (a[0]) {
          case "member": {
            CuratorFramework c = newClient();
            clients.put(id, c);
            members.put(id, new DistributedDoubleBarrier(c, a[2], Integer.parseInt(a[3])));
            org.apache.zookeeper.ZooKeeper z = c.getZookeeperClient().getZooKeeper();
            say("member " + id + " " + Long.toHexString(z.getSessionId()) + " " + hex(z.getSessionPasswd()));
            break;
          }
          case "enter": {
            DistributedDoubleBarrier b = members.get(id);
            long ms = Long.parseLong(a[2]);
            background(id, () -> "entered " + id + " " + b.enter(ms, TimeUnit.MILLISECONDS));
            break;
          }
          case "leave": {
            DistributedDoubleBarrier b = members.get(id);
            long ms = Long.parseLong(a[2]);
            background(id, () -> "left " + id + " " + b.leave(ms, TimeUnit.MILLISECONDS));
            break;
          }
          case "set": new DistributedBarrier(shared, a[1]).setBarrier(); say("set " + a[1]); break;
          case "remove": new DistributedBarrier(shared, a[1]).removeBarrier(); say("removed " + a[1]); break;
          case "wait": {
            DistributedBarrier b = new DistributedBarrier(shared, a[1]);
            long ms = Long.parseLong(a[2]);
            background(id, () -> "waited " + a[1] + " " + b.waitOnBarrier(ms, TimeUnit.MILLISECONDS));
            break;
          }
          case "close": {
            members.remove(id);
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
    for (CuratorFramework c : clients.values()) c.close();
    shared.close();
    System.exit(0);
  }
}
