// Apache Curator's locks and elections held on command, for @tenure/cli's `locks` / `leaders` interop
// suite: Tenure's CLI must read what Curator 5.4 (Debian's libcurator-recipes-java) writes.
//
// Each holder has its own CuratorFramework (its own session). Commands on stdin, one answer line each
// on stdout; everything is closed when stdin closes.
//
//   mutex <name> <path> <data>     InterProcessMutex whose lock node holds <data>; acquires in the
//                                  background -> "started <name> <sessionHex>", later "acquired <name>"
//   write <name> <path>            InterProcessReadWriteLock write lock, the same way
//   read <name> <path>             InterProcessReadWriteLock read lock, the same way
//   lease <name> <path> <max> <data>  one lease of InterProcessSemaphoreV2(path, max), node data <data>
//   latch <name> <path>            LeaderLatch with id <name>                 -> "started <name> <sessionHex>"
//   selector <name> <path>         LeaderSelector with id <name>, leading until released -> "started ...", "leading <name>"
//   member <name> <path> <payload>  GroupMember <name> of the group at <path>    -> "started <name> <sessionHex>"
//   service <name> <svc> <address> <port>  register instance <name> of service <svc> under /services
//                                  (curator-x-discovery, its default JSON)  -> "started <name> <sessionHex>"
//   release <name>                 release the lock / lease, close the latch / selector, close the client -> "released <name>"
// Errors answer "error <name> <message>".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.nodes.GroupMember;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;

public class CuratorRecipeHolders {
  static String connect;

  /** What `release <name>` undoes. */
  interface Holding {
    void release() throws Exception;
  }

  static final Map<String, Holding> holdings = new ConcurrentHashMap<>();
  static final Map<String, CuratorFramework> clients = new ConcurrentHashMap<>();

  static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  static CuratorFramework client(String name) throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.builder()
        .connectString(connect)
        .sessionTimeoutMs(10000)
        .connectionTimeoutMs(5000)
        .retryPolicy(new ExponentialBackoffRetry(20, 10, 500))
        .build();
    c.start();
    if (!c.blockUntilConnected(10, TimeUnit.SECONDS)) throw new IllegalStateException("not connected");
    clients.put(name, c);
    return c;
  }

  static String session(CuratorFramework c) throws Exception {
    return "0x" + Long.toHexString(c.getZookeeperClient().getZooKeeper().getSessionId());
  }

  /**
   * Acquires `lock` on a thread of its own (it may wait) and releases it on that thread (Curator's
   * locks belong to the thread that acquired them) when release() is called.
   */
  static void hold(String name, CuratorFramework c, InterProcessLock lock) throws Exception {
    CountDownLatch acquired = new CountDownLatch(1);
    CountDownLatch letGo = new CountDownLatch(1);
    Thread t = new Thread(() -> {
      try {
        lock.acquire();
        acquired.countDown();
        say("acquired " + name);
        letGo.await();
        lock.release();
      } catch (InterruptedException e) {
        // released before it was acquired
      } catch (Exception e) {
        say("error " + name + " " + e);
      }
    });
    t.setDaemon(true);
    holdings.put(name, () -> {
      if (acquired.getCount() == 0) letGo.countDown();
      else t.interrupt();
      t.join(10000);
    });
    t.start();
    say("started " + name + " " + session(c));
  }

  static void run(String[] w) throws Exception {
    String name = w[1];
    switch (w[0]) {
      case "mutex": {
        CuratorFramework c = client(name);
        byte[] data = w[3].getBytes(StandardCharsets.UTF_8);
        // Curator's lock node bytes: getLockNodeBytes() is the hook InterProcessMutex offers.
        hold(name, c, new InterProcessMutex(c, w[2]) {
          @Override
          protected byte[] getLockNodeBytes() {
            return data;
          }
        });
        break;
      }
      case "write": {
        CuratorFramework c = client(name);
        hold(name, c, new InterProcessReadWriteLock(c, w[2]).writeLock());
        break;
      }
      case "read": {
        CuratorFramework c = client(name);
        hold(name, c, new InterProcessReadWriteLock(c, w[2]).readLock());
        break;
      }
      case "lease": {
        CuratorFramework c = client(name);
        InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(c, w[2], Integer.parseInt(w[3]));
        semaphore.setNodeData(w[4].getBytes(StandardCharsets.UTF_8));
        Lease lease = semaphore.acquire(10, TimeUnit.SECONDS);
        if (lease == null) throw new IllegalStateException("no lease within 10 s");
        holdings.put(name, () -> semaphore.returnLease(lease));
        say("started " + name + " " + session(c));
        break;
      }
      case "latch": {
        CuratorFramework c = client(name);
        LeaderLatch latch = new LeaderLatch(c, w[2], name);
        latch.start();
        holdings.put(name, latch::close);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (latch.getParticipants().stream().noneMatch(p -> p.getId().equals(name)) && System.nanoTime() < until) Thread.sleep(5);
        say("started " + name + " " + session(c));
        break;
      }
      case "selector": {
        CuratorFramework c = client(name);
        CountDownLatch done = new CountDownLatch(1);
        LeaderSelector selector = new LeaderSelector(c, w[2], new LeaderSelectorListenerAdapter() {
          @Override
          public void takeLeadership(CuratorFramework client) throws Exception {
            say("leading " + name);
            done.await();
          }
        });
        selector.setId(name);
        selector.start();
        holdings.put(name, () -> {
          done.countDown();
          selector.close();
        });
        say("started " + name + " " + session(c));
        break;
      }
      case "member": {
        CuratorFramework c = client(name);
        GroupMember member = new GroupMember(c, w[2], name, w[3].getBytes(StandardCharsets.UTF_8));
        member.start();
        holdings.put(name, member::close);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (c.checkExists().forPath(w[2] + "/" + name) == null && System.nanoTime() < until) Thread.sleep(5);
        say("started " + name + " " + session(c));
        break;
      }
      case "service": {
        CuratorFramework c = client(name);
        ServiceInstance<Void> instance = ServiceInstance.<Void>builder().name(w[2]).id(name).address(w[3]).port(Integer.parseInt(w[4])).build();
        ServiceDiscovery<Void> discovery = ServiceDiscoveryBuilder.builder(Void.class).client(c).basePath("/services").thisInstance(instance).build();
        discovery.start();
        holdings.put(name, discovery::close);
        say("started " + name + " " + session(c));
        break;
      }
      case "release": {
        Holding h = holdings.remove(name);
        if (h != null) h.release();
        CuratorFramework c = clients.remove(name);
        if (c != null) c.close();
        say("released " + name);
        break;
      }
      default:
        say("error " + name + " unknown command " + w[0]);
    }
  }

  public static void main(String[] args) throws Exception {
    connect = args[0];
    say("ready");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] w = line.trim().split(" ");
      if (w.length < 2) continue;
      try {
        run(w);
      } catch (Exception e) {
        say("error " + w[1] + " " + e);
      }
    }
    for (String name : holdings.keySet()) {
      try {
        holdings.remove(name).release();
      } catch (Exception e) {
        // closing anyway
      }
    }
    for (CuratorFramework c : clients.values()) c.close();
  }
}
