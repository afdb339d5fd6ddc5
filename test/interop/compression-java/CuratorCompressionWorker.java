// Apache Curator's compression (curator-framework 5.4's GzipCompressionProvider, `.compressed()`
// and `.decompressed()`) driven line by line from a test, for Tenure's compression interop suite.
// One CuratorFramework per JVM; exits when stdin closes. Bytes travel as hex ("-" for none).
//
//   args: <connectString>
//   create <path> <hex>       create().compressed() (the parent exists)               -> "created <path>"
//   set <path> <hex>          setData().compressed()                                       -> "set <path>"
//   txn <path> <hex> <hex>    one transaction: create().compressed() <path>, then setData().compressed() <path> with the second
//                                                                                          -> "txn <path>"
//   read <path>               getData().decompressed()                                     -> "data <hex>"
//   raw <path>                getData() (the stored bytes)                                 -> "raw <hex>"
//   provider <hex>            GzipCompressionProvider.compress, no ZooKeeper               -> "gzip <hex>"
//   stream <hex>              java.util.zip.GZIPOutputStream, no ZooKeeper                 -> "gzip <hex>"
// Errors answer "error <exception class> <message>".
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.zip.GZIPOutputStream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.imps.GzipCompressionProvider;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorCompressionWorker {
  public static void main(String[] args) throws Exception {
    CuratorFramework client = CuratorFrameworkFactory.newClient(args[0], 10000, 5000, new ExponentialBackoffRetry(50, 5));
    client.start();
    client.blockUntilConnected();
    System.out.println("ready");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] w = line.trim().split(" ");
      String answer;
      try {
        switch (w[0]) {
          case "create":
            client.create().compressed().forPath(w[1], bytes(w[2]));
            answer = "created " + w[1];
            break;
          case "set":
            client.setData().compressed().forPath(w[1], bytes(w[2]));
            answer = "set " + w[1];
            break;
          case "txn": {
            CuratorOp create = client.transactionOp().create().compressed().forPath(w[1], bytes(w[2]));
            CuratorOp set = client.transactionOp().setData().compressed().forPath(w[1], bytes(w[3]));
            client.transaction().forOperations(create, set);
            answer = "txn " + w[1];
            break;
          }
          case "read":
            answer = "data " + hex(client.getData().decompressed().forPath(w[1]));
            break;
          case "raw":
            answer = "raw " + hex(client.getData().forPath(w[1]));
            break;
          case "provider":
            answer = "gzip " + hex(new GzipCompressionProvider().compress("/", bytes(w[1])));
            break;
          case "stream": {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
              gz.write(bytes(w[1]));
            }
            answer = "gzip " + hex(out.toByteArray());
            break;
          }
          default:
            answer = "error unknown command " + w[0];
        }
      } catch (Exception e) {
        answer = "error " + e.getClass().getName() + " " + String.valueOf(e.getMessage()).replace('\n', ' ');
      }
      System.out.println(answer);
      System.out.flush();
    }
    client.close();
  }

  static byte[] bytes(String hex) {
    if (hex.equals("-")) return new byte[0];
    byte[] b = new byte[hex.length() / 2];
    for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
    return b;
  }

  static String hex(byte[] b) {
    if (b.length == 0) return "-";
    StringBuilder s = new StringBuilder(b.length * 2);
    for (byte x : b) s.append(String.format("%02x", x & 0xff));
    return s.toString();
  }
}
