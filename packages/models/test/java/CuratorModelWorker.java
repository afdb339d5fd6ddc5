// The Java side of Tenure's models interop suite (test/interop/models-curator.slow.test.ts): a
// model node read and written as curator-x-async's ModeledFramework does it with its
// JacksonModelSerializer. Debian ships no curator-x-async jar, so the two pieces it uses are
// spelled out here with the same calls: the serializer is Jackson's ObjectMapper with
// FAIL_ON_UNKNOWN_PROPERTIES off, reading with readerFor(type) and writing with
// writerFor(type).writeValueAsBytes (JacksonModelSerializer's own setup), and set() is
// create().orSetData().creatingParentContainersIfNeeded() (ModelSpec's default create options,
// createParentsAsContainers and setDataIfExists). Exits when stdin closes.
//
//   write <path> <fixture>      set(fixture) as ModeledFramework.set           -> "wrote <path>"
//   check <path> <fixture>      read() into a User, equals(fixture)?           -> "check <true|false> <User as Jackson writes it>"
//   read <path>                 read() into a User                             -> "read <User as Jackson writes it>"
//   bump <path> <n>             n versioned read-modify-writes (age + 1),
//                               retried on BadVersion (VersionedModeledFramework) -> "bumped <conflicts>"
//   writez <path> <fixture>     set(fixture) with CreateOption.compress: create().compressed() -> "wrote <path>"
//   checkz <path> <fixture>     read() with compress: getData().decompressed()  -> "check <true|false> <User as Jackson writes it>"
// Errors answer "error <message>".
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

public class CuratorModelWorker {
  /** JacksonModelSerializer's mapper: a plain ObjectMapper that ignores unknown properties. */
  static final ObjectMapper MAPPER = new ObjectMapper();

  static {
    MAPPER.configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
  }

  static final ObjectReader READER = MAPPER.readerFor(User.class);
  static final ObjectWriter WRITER = MAPPER.writerFor(User.class);

  public static class Address {
    private String city;
    private String zip;

    public Address() {}

    Address(String city, String zip) {
      this.city = city;
      this.zip = zip;
    }

    public String getCity() { return city; }
    public void setCity(String city) { this.city = city; }
    public String getZip() { return zip; }
    public void setZip(String zip) { this.zip = zip; }

    @Override
    public boolean equals(Object o) {
      return o instanceof Address && Objects.equals(city, ((Address) o).city) && Objects.equals(zip, ((Address) o).zip);
    }

    @Override
    public int hashCode() { return Objects.hash(city, zip); }
  }

  public static class User {
    private String id;
    private String name;
    private int age;
    private long visits;
    private double score;
    private boolean active;
    private List<String> roles = new ArrayList<>();
    private Address address;
    private Map<String, Integer> quotas = new LinkedHashMap<>();

    public User() {}

    public String getId() { return id; }
    public void setId(String id) { this.id = id; }
    public String getName() { return name; }
    public void setName(String name) { this.name = name; }
    public int getAge() { return age; }
    public void setAge(int age) { this.age = age; }
    public long getVisits() { return visits; }
    public void setVisits(long visits) { this.visits = visits; }
    public double getScore() { return score; }
    public void setScore(double score) { this.score = score; }
    public boolean isActive() { return active; }
    public void setActive(boolean active) { this.active = active; }
    public List<String> getRoles() { return roles; }
    public void setRoles(List<String> roles) { this.roles = roles; }
    public Address getAddress() { return address; }
    public void setAddress(Address address) { this.address = address; }
    public Map<String, Integer> getQuotas() { return quotas; }
    public void setQuotas(Map<String, Integer> quotas) { this.quotas = quotas; }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof User)) return false;
      User u = (User) o;
      return Objects.equals(id, u.id) && Objects.equals(name, u.name) && age == u.age && visits == u.visits
          && Double.compare(score, u.score) == 0 && active == u.active && Objects.equals(roles, u.roles)
          && Objects.equals(address, u.address) && Objects.equals(quotas, u.quotas);
    }

    @Override
    public int hashCode() { return Objects.hash(id, name, age, visits, score, active, roles, address, quotas); }
  }

  /** The fixtures, built in Java; the test has the same ones in TypeScript. */
  static User fixture(String name) {
    User u = new User();
    switch (name) {
      case "alice":
        u.id = "alice";
        u.name = "Alice Zoë ✓ 漢字";
        u.age = 31;
        u.visits = 9007199254740991L; // 2^53 - 1: the largest long a JavaScript number holds exactly
        u.score = 0.1;
        u.active = true;
        u.roles = new ArrayList<>(Arrays.asList("admin", "dev"));
        u.address = new Address("Lyon", "69001");
        u.quotas.put("cpu", 4);
        u.quotas.put("disk", 100);
        return u;
      case "bob":
        u.id = "bob";
        u.name = "Bob \"the builder\"\n\\";
        u.age = 0;
        u.visits = -1L;
        u.score = -1.5e-7;
        u.active = false;
        u.address = null;
        return u;
      default:
        throw new IllegalArgumentException("no fixture " + name);
    }
  }

  static String show(User u) throws Exception {
    return new String(WRITER.writeValueAsBytes(u), StandardCharsets.UTF_8);
  }

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
          case "write": {
            byte[] bytes = WRITER.writeValueAsBytes(fixture(w[2]));
            client.create().orSetData().creatingParentContainersIfNeeded().forPath(w[1], bytes);
            System.out.println("wrote " + w[1]);
            break;
          }
          case "writez": {
            byte[] bytes = WRITER.writeValueAsBytes(fixture(w[2]));
            client.create().compressed().creatingParentContainersIfNeeded().forPath(w[1], bytes);
            System.out.println("wrote " + w[1]);
            break;
          }
          case "checkz": {
            User got = READER.readValue(client.getData().decompressed().forPath(w[1]));
            System.out.println("check " + got.equals(fixture(w[2])) + " " + show(got));
            break;
          }
          case "check": {
            User got = READER.readValue(client.getData().forPath(w[1]));
            System.out.println("check " + got.equals(fixture(w[2])) + " " + show(got));
            break;
          }
          case "read": {
            User got = READER.readValue(client.getData().forPath(w[1]));
            System.out.println("read " + show(got));
            break;
          }
          case "bump": {
            int conflicts = 0;
            for (int done = 0; done < Integer.parseInt(w[2]); ) {
              Stat stat = new Stat();
              User u = READER.readValue(client.getData().storingStatIn(stat).forPath(w[1]));
              u.age++;
              try {
                client.setData().withVersion(stat.getVersion()).forPath(w[1], WRITER.writeValueAsBytes(u));
                done++;
              } catch (KeeperException.BadVersionException e) {
                conflicts++;
              }
            }
            System.out.println("bumped " + conflicts);
            break;
          }
          default:
            System.out.println("error unknown command " + w[0]);
        }
      } catch (Exception e) {
        System.out.println("error " + e.toString().replace('\n', ' '));
      }
      System.out.flush();
    }
    client.close();
  }
}
