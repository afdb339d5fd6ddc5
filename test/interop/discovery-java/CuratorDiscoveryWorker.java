// Apache Curator's service discovery (curator-x-discovery 5.4) driven line by line from a test,
// for Tenure's discovery interop suite. One CuratorFramework per JVM; exits when stdin closes.
// A ServiceDiscovery<Object> with JsonInstanceSerializer (compatible mode, Curator's default), and
// a second one over ZookeeperInstance payloads, as Spring Cloud Zookeeper builds it.
//
//   args: <connectString> <sessionTimeoutMs> <basePath>
//   register <json>          registers {name,id,address,port,sslPort,payload,serviceType,uriSpec}  -> "registered <instance json>"
//   unregister <name> <id>   unregisterService                                                     -> "unregistered <id>"
//   query <name>             queryForInstances                                                     -> "instances <json array>"
//   cache <name>             starts a ServiceCache; prints now and on every change                -> "cache <name> <ids|->"
//   provider <name> <n>      a round-robin ServiceProvider, n getInstance() calls                  -> "picked <id,id,...>"
//   spring-register <json>   registers with a ZookeeperInstance payload {id,name,metadata}         -> "registered <instance json>"
//   spring-query <name>      queryForInstances through the ZookeeperInstance serializer            -> "instances <json array>"
// Instances print as {name,id,address,port,sslPort,registrationTimeUTC,serviceType,uriSpec,enabled,payload,payloadClass};
// uriSpec as its template. Errors answer "error <message>".
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceInstanceBuilder;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.ServiceType;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.curator.x.discovery.details.ServiceCacheListener;
import org.apache.curator.x.discovery.strategies.RoundRobinStrategy;
import org.springframework.cloud.zookeeper.discovery.ZookeeperInstance;

public class CuratorDiscoveryWorker {
  static final ObjectMapper MAPPER = new ObjectMapper();

  public static void main(String[] args) throws Exception {
    CuratorFramework client = CuratorFrameworkFactory.newClient(args[0], Integer.parseInt(args[1]), 5000, new ExponentialBackoffRetry(50, 5));
    client.start();
    client.blockUntilConnected();
    ServiceDiscovery<Object> discovery = ServiceDiscoveryBuilder.builder(Object.class)
        .client(client).basePath(args[2]).serializer(new JsonInstanceSerializer<>(Object.class)).build();
    discovery.start();
    ServiceDiscovery<ZookeeperInstance> spring = ServiceDiscoveryBuilder.builder(ZookeeperInstance.class)
        .client(client).basePath(args[2]).serializer(new JsonInstanceSerializer<>(ZookeeperInstance.class)).build();
    spring.start();
    List<AutoCloseable> open = new ArrayList<>();
    System.out.println("ready");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] w = line.trim().split(" ", 2);
      try {
        switch (w[0]) {
          case "register": {
            Map<?, ?> m = MAPPER.readValue(w[1], Map.class);
            ServiceInstance<Object> i = build(ServiceInstance.<Object>builder(), m).payload(m.get("payload")).build();
            discovery.registerService(i);
            say("registered " + MAPPER.writeValueAsString(fields(i)));
            break;
          }
          case "spring-register": {
            Map<?, ?> m = MAPPER.readValue(w[1], Map.class);
            Map<?, ?> p = (Map<?, ?>) m.get("payload");
            @SuppressWarnings("unchecked")
            ZookeeperInstance payload = new ZookeeperInstance((String) p.get("id"), (String) p.get("name"), new LinkedHashMap<>((Map<String, String>) p.get("metadata")));
            ServiceInstance<ZookeeperInstance> i = build(ServiceInstance.<ZookeeperInstance>builder(), m).payload(payload).build();
            spring.registerService(i);
            say("registered " + MAPPER.writeValueAsString(fields(i)));
            break;
          }
          case "unregister": {
            String[] a = w[1].split(" ");
            discovery.unregisterService(discovery.queryForInstance(a[0], a[1]));
            say("unregistered " + a[1]);
            break;
          }
          case "query":
            say("instances " + MAPPER.writeValueAsString(all(discovery.queryForInstances(w[1]))));
            break;
          case "spring-query":
            say("instances " + MAPPER.writeValueAsString(all(spring.queryForInstances(w[1]))));
            break;
          case "cache": {
            String name = w[1];
            ServiceCache<Object> cache = discovery.serviceCacheBuilder().name(name).build();
            cache.addListener(new ServiceCacheListener() {
              @Override public void cacheChanged() { say("cache " + name + " " + ids(cache.getInstances())); }
              @Override public void stateChanged(CuratorFramework c, ConnectionState s) {}
            });
            cache.start();
            open.add(cache);
            say("cache " + name + " " + ids(cache.getInstances()));
            break;
          }
          case "provider": {
            String[] a = w[1].split(" ");
            try (ServiceProvider<Object> provider = discovery.serviceProviderBuilder().serviceName(a[0]).providerStrategy(new RoundRobinStrategy<>()).build()) {
              provider.start();
              List<String> picked = new ArrayList<>();
              for (int n = 0; n < Integer.parseInt(a[1]); n++) picked.add(provider.getInstance().getId());
              say("picked " + String.join(",", picked));
            }
            break;
          }
          default:
            say("error unknown command " + w[0]);
        }
      } catch (Exception e) {
        say("error " + e.toString().replace('\n', ' '));
      }
    }
    for (AutoCloseable c : open) c.close();
    spring.close();
    discovery.close();
    client.close();
  }

  static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  static <T> ServiceInstanceBuilder<T> build(ServiceInstanceBuilder<T> b, Map<?, ?> m) {
    b.name((String) m.get("name"));
    if (m.get("id") != null) b.id((String) m.get("id"));
    if (m.containsKey("address")) b.address((String) m.get("address"));
    if (m.get("port") != null) b.port((Integer) m.get("port"));
    if (m.get("sslPort") != null) b.sslPort((Integer) m.get("sslPort"));
    if (m.get("serviceType") != null) b.serviceType(ServiceType.valueOf((String) m.get("serviceType")));
    if (m.get("uriSpec") != null) b.uriSpec(new UriSpec((String) m.get("uriSpec")));
    return b;
  }

  static <T> List<Map<String, Object>> all(Collection<ServiceInstance<T>> instances) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (ServiceInstance<T> i : instances) out.add(fields(i));
    out.sort((a, b) -> ((String) a.get("id")).compareTo((String) b.get("id")));
    return out;
  }

  static Map<String, Object> fields(ServiceInstance<?> i) {
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("name", i.getName());
    f.put("id", i.getId());
    f.put("address", i.getAddress());
    f.put("port", i.getPort());
    f.put("sslPort", i.getSslPort());
    f.put("registrationTimeUTC", i.getRegistrationTimeUTC());
    f.put("serviceType", i.getServiceType().name());
    StringBuilder spec = new StringBuilder();
    if (i.getUriSpec() != null) for (UriSpec.Part p : i.getUriSpec().getParts()) spec.append(p.isVariable() ? "{" + p.getValue() + "}" : p.getValue());
    f.put("uriSpec", i.getUriSpec() == null ? null : spec.toString());
    f.put("enabled", i.isEnabled());
    Object payload = i.getPayload();
    if (payload instanceof ZookeeperInstance) {
      ZookeeperInstance z = (ZookeeperInstance) payload;
      Map<String, Object> p = new LinkedHashMap<>();
      p.put("id", z.getId());
      p.put("name", z.getName());
      p.put("metadata", z.getMetadata());
      payload = p;
    }
    f.put("payload", payload);
    f.put("payloadClass", i.getPayload() == null ? null : i.getPayload().getClass().getName());
    return f;
  }

  static String ids(List<? extends ServiceInstance<?>> instances) {
    List<String> ids = new ArrayList<>();
    for (ServiceInstance<?> i : instances) ids.add(i.getId());
    ids.sort(null);
    return ids.isEmpty() ? "-" : String.join(",", ids);
  }
}
