// Java's view of TLS identities, for Tenure's TLS tests (run with `java X509Tool.java ...`).
//
//   subject <certificate.pem>...           prints X500Principal.getName() (RFC 2253) of each, one per line
//   create <connect> <path> <data> <id>    over TLS (the zookeeper.* system properties), creates <path>
//                                          with the ACL x509:<id>:cdrwa, prints "created <path>"
//                                          and the ACL the server stored ("acl <scheme>:<id>:<perms>")
import java.io.FileInputStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;

public class X509Tool {
  public static void main(String[] args) throws Exception {
    if (args[0].equals("subject")) {
      CertificateFactory f = CertificateFactory.getInstance("X.509");
      for (int i = 1; i < args.length; i++) {
        try (FileInputStream in = new FileInputStream(args[i])) {
          X509Certificate c = (X509Certificate) f.generateCertificate(in);
          System.out.println(c.getSubjectX500Principal().getName());
        }
      }
      return;
    }
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper zk = new ZooKeeper(args[1], 10000, e -> {
      if (e.getState() == Watcher.Event.KeeperState.SyncConnected) connected.countDown();
    });
    if (!connected.await(20, TimeUnit.SECONDS)) {
      System.err.println("not connected");
      System.exit(2);
    }
    try {
      List<ACL> acl = new ArrayList<>(List.of(new ACL(31, new Id("x509", args[4]))));
      zk.create(args[2], args[3].getBytes(StandardCharsets.UTF_8), acl, CreateMode.PERSISTENT);
      System.out.println("created " + args[2]);
      for (ACL a : zk.getACL(args[2], new Stat())) System.out.println("acl " + a.getId().getScheme() + ":" + a.getId().getId() + ":" + a.getPerms());
      zk.close();
    } catch (Exception e) {
      e.printStackTrace();
      System.exit(1);
    }
    System.exit(0); // the client's threads are not daemons
  }
}
