/**
 * Spring Cloud Zookeeper's payload: `org.springframework.cloud.zookeeper.discovery.ZookeeperInstance`
 * (id, name, metadata), with the `@class` Jackson needs to bind it. Spring registers under
 * `/services` (spring.cloud.zookeeper.discovery.root) with Curator's compatible JSON, uriSpec
 * `{scheme}://{address}:{port}`, and metadata `instance_status: UP`.
 */
export const SPRING_CLOUD_INSTANCE_CLASS = 'org.springframework.cloud.zookeeper.discovery.ZookeeperInstance';

export interface SpringCloudInstance {
  '@class': typeof SPRING_CLOUD_INSTANCE_CLASS;
  id: string;
  name: string;
  metadata: Record<string, string>;
}

/**
 * The payload a Spring Cloud Zookeeper service reads: `id` is Spring's application context id
 * (often `<name>-1` or `<name>:<port>`), `name` the spring.application.name; `metadata` gets
 * `instance_status: 'UP'` unless it says otherwise.
 */
export function springCloudPayload(p: { id: string; name: string; metadata?: Record<string, string> }): SpringCloudInstance {
  return { '@class': SPRING_CLOUD_INSTANCE_CLASS, id: p.id, name: p.name, metadata: { instance_status: 'UP', ...p.metadata } };
}
