// Curator's DistributedAtomicLong, increments, for bench/counters.ts.
// Usage: java CuratorCounterBench <connectString> <path> <clients> <seconds> <rounds> <warmupSeconds>
// Each of <clients> threads has its own CuratorFramework (its own session) and loops increment()
// on one DistributedAtomicLong on <path>, with RetryNTimes(10, 1) for conflicts. Prints one JSON
// line: the succeeded increments per second of each round.
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryNTimes;

public class CuratorCounterBench {
  public static void main(String[] args) throws Exception {
    String connect = args[0];
    String path = args[1];
    int clients = Integer.parseInt(args[2]);
    double seconds = Double.parseDouble(args[3]);
    int rounds = Integer.parseInt(args[4]);
    double warmup = Double.parseDouble(args[5]);
    List<CuratorFramework> cs = new ArrayList<>();
    for (int i = 0; i < clients; i++) {
      CuratorFramework c = CuratorFrameworkFactory.newClient(connect, 30000, 10000, new ExponentialBackoffRetry(100, 3));
      c.start();
      if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) throw new IllegalStateException("not connected");
      cs.add(c);
    }
    run(cs, path, warmup);
    StringBuilder out = new StringBuilder("[");
    for (int r = 0; r < rounds; r++) {
      if (r > 0) out.append(',');
      out.append(String.format("%.1f", run(cs, path, seconds)));
    }
    System.out.println(out.append(']'));
    for (CuratorFramework c : cs) c.close();
    System.exit(0);
  }

  /** Every client loops increment() for `seconds`; returns succeeded increments per second. */
  static double run(List<CuratorFramework> cs, String path, double seconds) throws Exception {
    AtomicLong done = new AtomicLong();
    CyclicBarrier start = new CyclicBarrier(cs.size() + 1);
    long[] window = new long[2];
    List<Thread> threads = new ArrayList<>();
    for (CuratorFramework c : cs) {
      Thread t = new Thread(() -> {
        try {
          DistributedAtomicLong n = new DistributedAtomicLong(c, path, new RetryNTimes(10, 1));
          start.await();
          long end = window[1];
          while (System.nanoTime() < end) if (n.increment().succeeded()) done.incrementAndGet();
        } catch (Exception e) {
          e.printStackTrace();
          System.exit(2);
        }
      });
      threads.add(t);
      t.start();
    }
    window[0] = System.nanoTime();
    window[1] = window[0] + (long) (seconds * 1e9);
    start.await();
    for (Thread t : threads) t.join();
    double elapsed = (System.nanoTime() - window[0]) / 1e9;
    return done.get() / elapsed;
  }
}
