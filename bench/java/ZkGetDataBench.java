// The Java ZooKeeper client (Debian's zookeeper.jar, 3.8) as one peer of bench/clients.ts.
// Compiled at bench time by test/interop/java.ts; speaks the bench's worker protocol on
// stdin/stdout, exactly like the Node workers:
//
//   java ZkGetDataBench <connectString> <path> <payloadBytes> <inFlight>
//     -> "ready" once connected and <path> holds <payloadBytes> bytes
//   getdata <ms>        pipelined getData of <path>, <inFlight> requests outstanding, for <ms>;
//                       then the outstanding ones drain -> "result <ops> <elapsedMs> <cpuMicros>"
//   createdelete <ms>   sequential create + delete of <path>-cd, one at a time, for <ms>
//                       -> "result <pairs> <elapsedMs> <cpuMicros>"
//   warmup <ms> <ms>    both of the above, results not printed -> "warmed"
// Exits when stdin closes. CPU is the whole process's (every thread, JIT and GC included), as
// process.cpuUsage() is for the Node workers.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.zookeeper.AsyncCallback.DataCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

public class ZkGetDataBench {
  static ZooKeeper zk;
  static String path;
  static byte[] payload;
  static int inFlight;

  static long cpuMicros() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1000;
  }

  public static void main(String[] args) throws Exception {
    String connect = args[0];
    path = args[1];
    payload = new byte[Integer.parseInt(args[2])];
    Arrays.fill(payload, (byte) 'x');
    inFlight = Integer.parseInt(args[3]);
    CountDownLatch connected = new CountDownLatch(1);
    zk = new ZooKeeper(connect, 30000, e -> {
      if (e.getState() == Watcher.Event.KeeperState.SyncConnected) connected.countDown();
    });
    if (!connected.await(20, TimeUnit.SECONDS)) throw new IllegalStateException("not connected to " + connect);
    try {
      zk.create(path, payload, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
    } catch (KeeperException.NodeExistsException e) {
      zk.setData(path, payload, -1);
    }
    System.out.println("ready");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] a = line.trim().split(" ");
      switch (a[0]) {
        case "getdata": System.out.println("result " + getData(Long.parseLong(a[1]))); break;
        case "createdelete": System.out.println("result " + createDelete(Long.parseLong(a[1]))); break;
        case "warmup": getData(Long.parseLong(a[1])); createDelete(Long.parseLong(a[2])); System.out.println("warmed"); break;
        default: System.out.println("error unknown command " + a[0]);
      }
      System.out.flush();
    }
    zk.close();
  }

  /** Keeps inFlight getData requests outstanding: each completion issues the next until the time is up. */
  static String getData(long ms) throws Exception {
    AtomicLong done = new AtomicLong();
    AtomicBoolean stop = new AtomicBoolean(false);
    CountDownLatch drained = new CountDownLatch(inFlight);
    AtomicBoolean failed = new AtomicBoolean(false);
    DataCallback[] cb = new DataCallback[1];
    cb[0] = (rc, p, ctx, data, stat) -> {
      if (rc != 0) failed.set(true);
      done.incrementAndGet();
      if (stop.get() || rc != 0) drained.countDown();
      else zk.getData(path, false, cb[0], null);
    };
    long cpu0 = cpuMicros();
    long start = System.nanoTime();
    for (int i = 0; i < inFlight; i++) zk.getData(path, false, cb[0], null);
    Thread.sleep(ms);
    stop.set(true);
    drained.await();
    long elapsedNs = System.nanoTime() - start;
    long cpu = cpuMicros() - cpu0;
    if (failed.get()) throw new IllegalStateException("a getData failed");
    return done.get() + " " + (elapsedNs / 1e6) + " " + cpu;
  }

  /** One create and one delete at a time, each waiting for its reply. */
  static String createDelete(long ms) throws Exception {
    String p = path + "-cd";
    long n = 0;
    long cpu0 = cpuMicros();
    long start = System.nanoTime();
    long end = start + ms * 1_000_000L;
    while (System.nanoTime() < end) {
      zk.create(p, payload, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
      zk.delete(p, -1);
      n++;
    }
    long elapsedNs = System.nanoTime() - start;
    return n + " " + (elapsedNs / 1e6) + " " + (cpuMicros() - cpu0);
  }
}
