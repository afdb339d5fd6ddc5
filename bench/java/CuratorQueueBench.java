// Curator's DistributedQueue, put + take items per second, for bench/queues.ts.
// Usage: java CuratorQueueBench <connectString> <basePath> <producers> <consumers> <seconds> <rounds> <warmupSeconds>
// Every producer and consumer has its own CuratorFramework (its own session). Each round uses a
// fresh queue path: the consumers start, then each producer loops put() (putInBackground(false),
// so every put is acknowledged) for <seconds>; the rate is the items consumed in that window.
// Prints one JSON line: the items per second of each round.
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorQueueBench {
  static final QueueSerializer<byte[]> BYTES = new QueueSerializer<byte[]>() {
    public byte[] serialize(byte[] item) { return item; }
    public byte[] deserialize(byte[] bytes) { return bytes; }
  };

  public static void main(String[] args) throws Exception {
    String connect = args[0];
    String base = args[1];
    int producers = Integer.parseInt(args[2]);
    int consumers = Integer.parseInt(args[3]);
    double seconds = Double.parseDouble(args[4]);
    int rounds = Integer.parseInt(args[5]);
    double warmup = Double.parseDouble(args[6]);
    List<CuratorFramework> ps = clients(connect, producers);
    List<CuratorFramework> cs = clients(connect, consumers);
    run(ps, cs, base + "/warmup", warmup);
    StringBuilder out = new StringBuilder("[");
    for (int r = 0; r < rounds; r++) {
      if (r > 0) out.append(',');
      out.append(String.format("%.1f", run(ps, cs, base + "/round-" + r, seconds)));
    }
    System.out.println(out.append(']'));
    for (CuratorFramework c : ps) c.close();
    for (CuratorFramework c : cs) c.close();
    System.exit(0);
  }

  static List<CuratorFramework> clients(String connect, int n) throws Exception {
    List<CuratorFramework> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      CuratorFramework c = CuratorFrameworkFactory.newClient(connect, 30000, 10000, new ExponentialBackoffRetry(100, 3));
      c.start();
      if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) throw new IllegalStateException("not connected");
      out.add(c);
    }
    return out;
  }

  static double run(List<CuratorFramework> ps, List<CuratorFramework> cs, String path, double seconds) throws Exception {
    AtomicLong consumed = new AtomicLong();
    long[] window = new long[2];
    List<DistributedQueue<byte[]>> consumerQueues = new ArrayList<>();
    QueueConsumer<byte[]> consumer = new QueueConsumer<byte[]>() {
      public void consumeMessage(byte[] item) {
        long now = System.nanoTime();
        if (now >= window[0] && now <= window[1]) consumed.incrementAndGet();
      }
      public void stateChanged(CuratorFramework c, ConnectionState s) {}
    };
    for (CuratorFramework c : cs) {
      DistributedQueue<byte[]> q = QueueBuilder.builder(c, consumer, BYTES, path).buildQueue();
      q.start();
      consumerQueues.add(q);
    }
    List<DistributedQueue<byte[]>> producerQueues = new ArrayList<>();
    for (CuratorFramework c : ps) {
      DistributedQueue<byte[]> q = QueueBuilder.builder(c, null, BYTES, path).putInBackground(false).buildQueue();
      q.start();
      producerQueues.add(q);
    }
    byte[] item = "item-0123456789".getBytes(StandardCharsets.UTF_8);
    window[0] = System.nanoTime();
    window[1] = window[0] + (long) (seconds * 1e9);
    List<Thread> threads = new ArrayList<>();
    for (DistributedQueue<byte[]> q : producerQueues) {
      Thread t = new Thread(() -> {
        try {
          while (System.nanoTime() < window[1]) q.put(item);
        } catch (Exception e) {
          throw new RuntimeException(e);
        }
      });
      t.start();
      threads.add(t);
    }
    for (Thread t : threads) t.join();
    long left = window[1] - System.nanoTime();
    if (left > 0) Thread.sleep(left / 1_000_000);
    double rate = consumed.get() / seconds;
    for (DistributedQueue<byte[]> q : producerQueues) q.close();
    for (DistributedQueue<byte[]> q : consumerQueues) q.close();
    return rate;
  }
}
