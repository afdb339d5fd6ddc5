// Curator's service discovery (curator-x-discovery 5.4), for bench/discovery.ts. Three modes:
//
//   getinstance <connect> <basePath> <instances> <seconds> <rounds> <warmupSeconds>
//       registers <instances> instances of "bench-get", starts a round-robin ServiceProvider, then
//       calls getInstance() in a loop; prints one JSON line: the calls per second of each round.
//   watch <connect> <basePath> <name> <count> <skip>
//       a ServiceCache of <name>; prints "ready" once started. Each instance first seen carries its
//       registration start (System.nanoTime, CLOCK_MONOTONIC, shared by every process on the host)
//       as its payload; after <count> instances prints one JSON line: the ms from registration
//       start to appearance of each, the first <skip> (warm-up) left out.
//   register <connect> <basePath> <name> <count> <gapMs>
//       registers <count> DYNAMIC instances one after the other, <gapMs> apart, each with the
//       nanoTime just before registerService as its payload; prints "[]" and waits for stdin EOF.
import java.io.InputStream;
import java.util.HashSet;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.curator.x.discovery.details.ServiceCacheListener;
import org.apache.curator.x.discovery.strategies.RoundRobinStrategy;

public class CuratorDiscoveryBench {
  public static void main(String[] args) throws Exception {
    CuratorFramework client = CuratorFrameworkFactory.newClient(args[1], 30000, 10000, new ExponentialBackoffRetry(50, 5));
    client.start();
    client.blockUntilConnected();
    ServiceDiscovery<Object> discovery = ServiceDiscoveryBuilder.builder(Object.class)
        .client(client).basePath(args[2]).serializer(new JsonInstanceSerializer<>(Object.class)).build();
    discovery.start();
    switch (args[0]) {
      case "getinstance": getInstance(discovery, Integer.parseInt(args[3]), Double.parseDouble(args[4]), Integer.parseInt(args[5]), Double.parseDouble(args[6])); break;
      case "watch": watch(discovery, args[3], Integer.parseInt(args[4]), Integer.parseInt(args[5])); break;
      case "register": register(discovery, args[3], Integer.parseInt(args[4]), Long.parseLong(args[5])); break;
      default: throw new IllegalArgumentException(args[0]);
    }
    discovery.close();
    client.close();
  }

  static void getInstance(ServiceDiscovery<Object> discovery, int instances, double seconds, int rounds, double warmup) throws Exception {
    for (int i = 0; i < instances; i++) {
      discovery.registerService(ServiceInstance.builder().name("bench-get").id("c" + i).address("10.0.0." + i).port(8000 + i).build());
    }
    try (ServiceProvider<Object> provider = discovery.serviceProviderBuilder().serviceName("bench-get").providerStrategy(new RoundRobinStrategy<>()).build()) {
      provider.start();
      if (provider.getAllInstances().size() != instances) throw new IllegalStateException("the provider sees " + provider.getAllInstances().size());
      loop(provider, warmup);
      StringBuilder out = new StringBuilder("[");
      for (int r = 0; r < rounds; r++) {
        if (r > 0) out.append(',');
        out.append(loop(provider, seconds));
      }
      System.out.println(out.append(']'));
    }
  }

  static long sink;

  static double loop(ServiceProvider<Object> provider, double seconds) throws Exception {
    long start = System.nanoTime();
    long end = start + (long) (seconds * 1e9);
    long calls = 0;
    long now;
    do {
      for (int i = 0; i < 1000; i++) sink += provider.getInstance().getPort();
      calls += 1000;
    } while ((now = System.nanoTime()) < end);
    return calls / ((now - start) / 1e9);
  }

  static void watch(ServiceDiscovery<Object> discovery, String name, int count, int skip) throws Exception {
    ServiceCache<Object> cache = discovery.serviceCacheBuilder().name(name).build();
    Set<String> seen = new HashSet<>();
    StringBuilder out = new StringBuilder("[");
    Object done = new Object();
    cache.addListener(new ServiceCacheListener() {
      @Override public void cacheChanged() {
        long now = System.nanoTime();
        synchronized (done) {
          for (ServiceInstance<Object> i : cache.getInstances()) {
            if (!seen.add(i.getId())) continue;
            if (seen.size() > skip) {
              if (out.length() > 1) out.append(',');
              out.append((now - Long.parseLong((String) i.getPayload())) / 1e6);
            }
          }
          if (seen.size() >= count) done.notifyAll();
        }
      }
      @Override public void stateChanged(CuratorFramework c, ConnectionState s) {}
    });
    cache.start();
    System.out.println("ready");
    System.out.flush();
    synchronized (done) {
      while (seen.size() < count) done.wait();
    }
    System.out.println(out.append(']'));
    cache.close();
  }

  static void register(ServiceDiscovery<Object> discovery, String name, int count, long gapMs) throws Exception {
    for (int i = 0; i < count; i++) {
      ServiceInstance<Object> instance = ServiceInstance.builder().name(name).id("r" + i).address("10.0.0.1").port(9000).payload((Object) Long.toString(System.nanoTime())).build();
      // The payload is the time just before the registration; the builder's work above is negligible.
      discovery.registerService(instance);
      Thread.sleep(gapMs);
    }
    System.out.println("[]");
    System.out.flush();
    InputStream in = System.in;
    while (in.read() >= 0) {}
  }
}
