// A stand-in for Spring Cloud Zookeeper's payload class, with its package, name and members
// (id, name, metadata; getters and setters; no Jackson annotations), so Curator's
// JsonInstanceSerializer<ZookeeperInstance> binds it exactly as a Spring service does.
package org.springframework.cloud.zookeeper.discovery;

import java.util.HashMap;
import java.util.Map;

public class ZookeeperInstance {
  private String id;
  private String name;
  private Map<String, String> metadata = new HashMap<>();

  @SuppressWarnings("unused")
  private ZookeeperInstance() {}

  public ZookeeperInstance(String id, String name, Map<String, String> metadata) {
    this.id = id;
    this.name = name;
    this.metadata = metadata;
  }

  public String getId() { return id; }
  public void setId(String id) { this.id = id; }
  public String getName() { return name; }
  public void setName(String name) { this.name = name; }
  public Map<String, String> getMetadata() { return metadata; }
  public void setMetadata(Map<String, String> metadata) { this.metadata = metadata; }
}
