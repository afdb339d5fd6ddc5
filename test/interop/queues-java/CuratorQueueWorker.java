// Apache Curator's queue recipes driven line by line from a test, for Tenure's queue interop suite.
//
// Compiled by test/interop/java.ts against Debian's libcurator-recipes-java. Items are UTF-8
// strings. Reads commands on stdin, answers on stdout (one line each); exits when stdin closes.
//
//   put <path> <n> <prefix>            DistributedQueue.put of <prefix>0 .. <prefix><n-1> -> "put <n>"
//   putmulti <path> <a,b,c>            one MultiItem -> "put 1"
//   putp <path> <item> <priority>      DistributedPriorityQueue.put -> "put 1"
//   putd <path> <item> <epochMs>       DistributedDelayQueue.put -> "put 1"
//   puti <path> <item> <id>            DistributedIdQueue.put -> "put 1"
//   removei <path> <id>                DistributedIdQueue.remove -> "removed <count>"
//   offer <path> <item>                SimpleDistributedQueue.offer -> "put 1"
//   take <path> <n>                    SimpleDistributedQueue.take, n times -> "item <v>" each, then "taken <n>"
//   consume <kind> <path> <n> <lockPath|->  start a consumer (kind: queue, priority, delay, id); prints
//                                      "item <v>" per item, then "consumed <n>" and closes it
//   crash <path> <lockPath>            a lock-safe consumer that halts the JVM (exit 137, no cleanup)
//                                      on its first item, after printing "crashing <v>"
// Errors answer "error <message>".
import java.io.BufferedReader;
import java.io.Closeable;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.queue.DistributedDelayQueue;
import org.apache.curator.framework.recipes.queue.DistributedIdQueue;
import org.apache.curator.framework.recipes.queue.DistributedPriorityQueue;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.MultiItem;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorQueueWorker {
  static CuratorFramework client;

  static final QueueSerializer<String> TEXT = new QueueSerializer<String>() {
    public byte[] serialize(String item) { return item.getBytes(StandardCharsets.UTF_8); }
    public String deserialize(byte[] bytes) { return new String(bytes, StandardCharsets.UTF_8); }
  };

  static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  abstract static class Consumer implements QueueConsumer<String> {
    public void stateChanged(CuratorFramework c, ConnectionState s) {}
  }

  static QueueBuilder<String> builder(String path, QueueConsumer<String> consumer, String lockPath) {
    QueueBuilder<String> b = QueueBuilder.builder(client, consumer, TEXT, path).putInBackground(false);
    if (lockPath != null && !lockPath.equals("-")) b = b.lockPath(lockPath);
    return b;
  }

  public static void main(String[] args) throws Exception {
    client = CuratorFrameworkFactory.builder()
        .connectString(args[0])
        .sessionTimeoutMs(args.length > 1 ? Integer.parseInt(args[1]) : 4000)
        .connectionTimeoutMs(5000)
        .retryPolicy(new ExponentialBackoffRetry(20, 10, 500))
        .build();
    client.start();
    if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) throw new IllegalStateException("not connected");
    say("ready");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] w = line.trim().split(" ");
      try {
        run(w);
      } catch (Exception e) {
        say("error " + e);
      }
    }
    client.close();
  }

  static void run(String[] w) throws Exception {
    switch (w[0]) {
      case "put": {
        DistributedQueue<String> q = builder(w[1], null, null).buildQueue();
        q.start();
        int n = Integer.parseInt(w[2]);
        for (int i = 0; i < n; i++) q.put(w[3] + i);
        q.close();
        say("put " + n);
        break;
      }
      case "putmulti": {
        DistributedQueue<String> q = builder(w[1], null, null).buildQueue();
        q.start();
        q.putMulti(new MultiItem<String>() {
          final java.util.Iterator<String> it = Arrays.asList(w[2].split(",")).iterator();
          public String nextItem() { return it.hasNext() ? it.next() : null; }
        });
        q.close();
        say("put 1");
        break;
      }
      case "putp": {
        DistributedPriorityQueue<String> q = builder(w[1], null, null).buildPriorityQueue(1);
        q.start();
        q.put(w[2], Integer.parseInt(w[3]));
        q.close();
        say("put 1");
        break;
      }
      case "putd": {
        DistributedDelayQueue<String> q = builder(w[1], null, null).buildDelayQueue();
        q.start();
        q.put(w[2], Long.parseLong(w[3]));
        q.close();
        say("put 1");
        break;
      }
      case "puti": {
        DistributedIdQueue<String> q = builder(w[1], null, null).buildIdQueue();
        q.start();
        q.put(w[2], w[3]);
        q.close();
        say("put 1");
        break;
      }
      case "removei": {
        DistributedIdQueue<String> q = builder(w[1], null, null).buildIdQueue();
        q.start();
        int removed = q.remove(w[2]);
        q.close();
        say("removed " + removed);
        break;
      }
      case "offer": {
        new SimpleDistributedQueue(client, w[1]).offer(w[2].getBytes(StandardCharsets.UTF_8));
        say("put 1");
        break;
      }
      case "take": {
        SimpleDistributedQueue q = new SimpleDistributedQueue(client, w[1]);
        int n = Integer.parseInt(w[2]);
        for (int i = 0; i < n; i++) say("item " + new String(q.take(), StandardCharsets.UTF_8));
        say("taken " + n);
        break;
      }
      case "consume": {
        int n = Integer.parseInt(w[3]);
        AtomicInteger seen = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(1);
        Consumer consumer = new Consumer() {
          public void consumeMessage(String item) {
            say("item " + item);
            if (seen.incrementAndGet() == n) done.countDown();
          }
        };
        QueueBuilder<String> b = builder(w[2], consumer, w.length > 4 ? w[4] : null);
        Closeable q;
        switch (w[1]) {
          case "priority": { DistributedPriorityQueue<String> p = b.buildPriorityQueue(1); p.start(); q = p; break; }
          case "delay": { DistributedDelayQueue<String> d = b.buildDelayQueue(); d.start(); q = d; break; }
          case "id": { DistributedIdQueue<String> d = b.buildIdQueue(); d.start(); q = d; break; }
          default: { DistributedQueue<String> d = b.buildQueue(); d.start(); q = d; }
        }
        new Thread(() -> {
          try {
            done.await();
            q.close();
            say("consumed " + n);
          } catch (Exception e) {
            say("error " + e);
          }
        }).start();
        break;
      }
      case "crash": {
        Consumer consumer = new Consumer() {
          public void consumeMessage(String item) {
            say("crashing " + item);
            Runtime.getRuntime().halt(137);
          }
        };
        DistributedQueue<String> q = builder(w[1], consumer, w[2]).buildQueue();
        q.start();
        break;
      }
      default:
        say("error unknown command " + w[0]);
    }
  }
}
