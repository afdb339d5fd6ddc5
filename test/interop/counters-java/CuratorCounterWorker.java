// Apache Curator's SharedCount and DistributedAtomicLong driven line by line from a test, for
// Tenure's counters interop suite. One CuratorFramework per JVM; exits when stdin closes.
//
//   sharedcount <path> <n>    n successful trySetCount(count + 1) loops  -> "done <refused>"
//   increment <path> <n>      n DistributedAtomicLong.increment() calls  -> "done <succeeded>"
//   getcount <path>           a fresh SharedCount's value                -> "count <value>"
//   getlong <path>            DistributedAtomicLong.get()                -> "long <value>"
// Errors answer "error <message>".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryNTimes;

public class CuratorCounterWorker {
  public static void main(String[] args) throws Exception {
    CuratorFramework client = CuratorFrameworkFactory.newClient(args[0], 10000, 5000, new ExponentialBackoffRetry(50, 5));
    client.start();
    client.blockUntilConnected();
    System.out.println("ready");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] w = line.trim().split(" ");
      try {
        switch (w[0]) {
          case "sharedcount": {
            try (SharedCount count = new SharedCount(client, w[1], 0)) {
              count.start();
              int refused = 0;
              for (int done = 0; done < Integer.parseInt(w[2]); ) {
                VersionedValue<Integer> v = count.getVersionedValue();
                if (count.trySetCount(v, v.getValue() + 1)) done++;
                else refused++;
              }
              System.out.println("done " + refused);
            }
            break;
          }
          case "increment": {
            DistributedAtomicLong n = new DistributedAtomicLong(client, w[1], new RetryNTimes(10, 1));
            int succeeded = 0;
            for (int i = 0; i < Integer.parseInt(w[2]); i++) if (n.increment().succeeded()) succeeded++;
            System.out.println("done " + succeeded);
            break;
          }
          case "getcount": {
            try (SharedCount count = new SharedCount(client, w[1], 0)) {
              count.start();
              System.out.println("count " + count.getCount());
            }
            break;
          }
          case "getlong": {
            AtomicValue<Long> v = new DistributedAtomicLong(client, w[1], new RetryNTimes(0, 0)).get();
            System.out.println("long " + v.postValue());
            break;
          }
          default:
            System.out.println("error unknown command " + w[0]);
        }
      } catch (Exception e) {
        System.out.println("error " + e);
      }
      System.out.flush();
    }
    client.close();
  }
}
