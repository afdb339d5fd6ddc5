// Apache Curator's LeaderLatch handing leadership over, term by term, for Tenure's interop suites.
//
// Compiled by test/interop/java.ts against Debian's libcurator-recipes-java (Curator 5.4).
//
//   CuratorLatchHandover <connectA> <connectB> <latchPath> <termPath> <participants> <termMs>
//
// Participant i has its own CuratorFramework (its own session) on connectA for even i, connectB for
// odd i, and a LeaderLatch on latchPath. All join at once. Each leader, as its term starts, checks
// through its own session (after a sync) that the previous leader is gone:
//   - its own latch node is now the first child of latchPath, and the previous leader's latch node
//     no longer exists;
//   - termPath says "ended <previous id>" (written by the previous leader before it closed its
//     latch), never "leading <previous id>";
// then writes "leading <id>" to termPath, holds the term for termMs, checks hasLeadership() is still
// true, writes "ended <id>" and closes its latch, which hands over. One line per term:
//   term <id> <connect> <ourNode> <czxid> <startNs> <endNs> <firstChild> <previousGone> <termNodeSaid> <stillLeader>
// (nanoTime in this one JVM; termNodeSaid has its space as '_'), then "done" once every participant
// has led, or "error <message>".
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.data.Stat;

public class CuratorLatchHandover {
  static String latchPath;
  static String termPath;
  static long termMs;
  /** The latch node of the leader whose term ended last. */
  static final AtomicReference<String> previousNode = new AtomicReference<>(null);
  static CountDownLatch terms;

  static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  static CuratorFramework connect(String connect) throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.builder()
        .connectString(connect)
        .sessionTimeoutMs(10000)
        .connectionTimeoutMs(5000)
        .retryPolicy(new ExponentialBackoffRetry(20, 10, 500))
        .build();
    c.start();
    if (!c.blockUntilConnected(15, TimeUnit.SECONDS)) throw new IllegalStateException("not connected to " + connect);
    return c;
  }

  /** ZooKeeper's sync through this client's session: later reads see every write committed before it. */
  static void sync(CuratorFramework c, String path) throws Exception {
    CountDownLatch done = new CountDownLatch(1);
    c.getZookeeperClient().getZooKeeper().sync(path, (rc, p, ctx) -> done.countDown(), null);
    if (!done.await(10, TimeUnit.SECONDS)) throw new IllegalStateException("sync timed out");
  }

  static long sequence(String node) {
    return Long.parseLong(node.substring(node.length() - 10));
  }

  static void term(String id, String connect, CuratorFramework c, LeaderLatch latch) {
    try {
      long start = System.nanoTime();
      String ours = latch.getOurPath();
      sync(c, latchPath);
      List<String> children = new ArrayList<>(c.getChildren().forPath(latchPath));
      children.sort((x, y) -> Long.compare(sequence(x), sequence(y)));
      boolean first = !children.isEmpty() && ours.endsWith("/" + children.get(0));
      String previous = previousNode.get();
      boolean previousGone = previous == null || c.checkExists().forPath(previous) == null;
      sync(c, termPath);
      String said = new String(c.getData().forPath(termPath), StandardCharsets.UTF_8);
      c.setData().forPath(termPath, ("leading " + id).getBytes(StandardCharsets.UTF_8));
      Stat stat = c.checkExists().forPath(ours);
      Thread.sleep(termMs);
      boolean still = latch.hasLeadership();
      c.setData().forPath(termPath, ("ended " + id).getBytes(StandardCharsets.UTF_8));
      long end = System.nanoTime();
      previousNode.set(ours);
      say(String.join(" ", "term", id, connect, ours, Long.toString(stat == null ? -1 : stat.getCzxid()), Long.toString(start),
          Long.toString(end), Boolean.toString(first), Boolean.toString(previousGone), said.replace(' ', '_'), Boolean.toString(still)));
      latch.close();
      c.close();
      terms.countDown();
    } catch (Throwable e) {
      say("error " + id + " " + e.toString().replace('\n', ' '));
    }
  }

  public static void main(String[] args) throws Exception {
    String[] connects = { args[0], args[1] };
    latchPath = args[2];
    termPath = args[3];
    int n = Integer.parseInt(args[4]);
    termMs = Long.parseLong(args[5]);
    terms = new CountDownLatch(n);
    List<CuratorFramework> clients = new ArrayList<>();
    for (int i = 0; i < n; i++) clients.add(connect(connects[i % 2]));
    clients.get(0).create().orSetData().creatingParentsIfNeeded().forPath(termPath, "none".getBytes(StandardCharsets.UTF_8));
    for (int i = 0; i < n; i++) {
      String id = "p" + i;
      String connect = connects[i % 2];
      CuratorFramework c = clients.get(i);
      LeaderLatch latch = new LeaderLatch(c, latchPath, id);
      // The term runs on its own thread: the listener's thread is the client's event thread.
      latch.addListener(new LeaderLatchListener() {
        @Override
        public void isLeader() {
          Thread t = new Thread(() -> term(id, connect, c, latch));
          t.setDaemon(true);
          t.start();
        }

        @Override
        public void notLeader() {}
      });
      latch.start();
    }
    if (!terms.await(180, TimeUnit.SECONDS)) say("error - not every participant led within 180 s");
    else say("done");
    System.exit(0);
  }
}
