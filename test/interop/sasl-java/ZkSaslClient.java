import java.nio.charset.StandardCharsets;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.ClientInfo;
import org.apache.zookeeper.data.Id;

/**
 * A plain ZooKeeper Java client for the SASL interop tests. SASL comes from the JVM's JAAS
 * `Client` section (or is off with -Dzookeeper.sasl.client=false). It prints `ready` once
 * connected and, with SASL, authenticated (`authfailed` if the server refused), then serves
 * commands from stdin, one per line, answering one line each:
 *   create PATH DATA ACL   (ACL: open, or scheme:id with all permissions)  -> created PATH | error CODE
 *   get PATH                                                                -> data TEXT | error CODE
 *   whoami                                                                  -> whoami scheme:user,...
 */
public final class ZkSaslClient {
  public static void main(String[] args) throws Exception {
    boolean sasl = !"false".equals(System.getProperty("zookeeper.sasl.client"));
    CountDownLatch connected = new CountDownLatch(1);
    CountDownLatch settled = new CountDownLatch(1);
    final String[] outcome = {"ready"};
    ZooKeeper zk = new ZooKeeper(args[0], 10000, event -> {
      KeeperState s = event.getState();
      if (s == KeeperState.SyncConnected) connected.countDown();
      if (s == KeeperState.SaslAuthenticated) settled.countDown();
      if (s == KeeperState.AuthFailed) {
        outcome[0] = "authfailed";
        connected.countDown();
        settled.countDown();
      }
    });
    if (!connected.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("not connected");
    if (sasl && !settled.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("SASL did not finish");
    System.out.println(outcome[0]);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] w = line.trim().split(" ");
      try {
        switch (w[0]) {
          case "create": {
            List<ACL> acl = "open".equals(w[3])
                ? ZooDefs.Ids.OPEN_ACL_UNSAFE
                : Collections.singletonList(new ACL(ZooDefs.Perms.ALL, new Id(w[3].substring(0, w[3].indexOf(':')), w[3].substring(w[3].indexOf(':') + 1))));
            System.out.println("created " + zk.create(w[1], w[2].getBytes(StandardCharsets.UTF_8), acl, CreateMode.PERSISTENT));
            break;
          }
          case "get":
            System.out.println("data " + new String(zk.getData(w[1], false, null), StandardCharsets.UTF_8));
            break;
          case "whoami": {
            List<String> ids = new ArrayList<>();
            for (ClientInfo c : zk.whoAmI()) ids.add(c.getAuthScheme() + ":" + c.getUser());
            Collections.sort(ids);
            System.out.println("whoami " + String.join(",", ids));
            break;
          }
          default:
            System.out.println("error unknown-command");
        }
      } catch (KeeperException e) {
        System.out.println("error " + e.code());
      }
    }
    zk.close();
  }
}
