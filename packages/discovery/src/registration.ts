/**
 * One instance registered by a ServiceDiscovery: its node at `<basePath>/<name>/<id>`, kept by a
 * PersistentNode, so a DYNAMIC instance comes back with the same id and JSON (the original
 * registrationTimeUTC included, as in Curator) after its session is lost.
 *
 * Curator re-creates a node it finds in its place (create; on NodeExists delete and create again)
 * so that watchers see the registration; so does our PersistentNode (`replaceExisting`): one
 * create round trip when the path is free, as in Curator.
 * DYNAMIC_SEQUENTIAL nodes are named `<id><10-digit sequence>`, and keep that name when re-created
 * (Curator makes an additional node each time).
 */
import { ClosedError, CreateMode, type Client, type Logger, type WaitOptions } from '@tenure/client';
import { PersistentNode } from '@tenure/nodes';
import type { InstanceSerializer } from './json-instance-serializer.js';
import type { ServiceInstance, ServiceType } from './service-instance.js';

const MODES: Record<ServiceType, CreateMode> = {
  DYNAMIC: CreateMode.EPHEMERAL,
  DYNAMIC_SEQUENTIAL: CreateMode.EPHEMERAL_SEQUENTIAL,
  STATIC: CreateMode.PERSISTENT,
  PERMANENT: CreateMode.PERSISTENT,
};

export interface RegistrationSettings {
  client: Client;
  serializer: InstanceSerializer;
  logger: Logger;
  rejoinJitterMs?: number;
  /** Reports the node's errors and conflicts. */
  onError: (error: Error) => void;
}

export class Registration {
  readonly node: PersistentNode;
  private stopSignal: (() => void) | null = null;
  private closed = false;

  constructor(
    readonly path: string,
    public instance: ServiceInstance<unknown>,
    private readonly settings: RegistrationSettings,
  ) {
    this.node = new PersistentNode(settings.client, {
      path,
      mode: MODES[instance.serviceType],
      data: settings.serializer.serialize(instance),
      // A sequential name is new each time: nothing to replace.
      replaceExisting: instance.serviceType !== 'DYNAMIC_SEQUENTIAL',
      logger: settings.logger,
      ...(settings.rejoinJitterMs !== undefined ? { rejoinJitterMs: settings.rejoinJitterMs } : {}),
    });
    this.node.on('error', settings.onError);
  }

  /** The node's path (with the sequence suffix for DYNAMIC_SEQUENTIAL, once created). */
  get actualPath(): string {
    return this.node.actualPath ?? this.path;
  }

  /**
   * Creates our node (replacing one found at our path, so watchers fire) and waits for it; all
   * within `options` (TimeoutError, AbortError, ClosedError).
   */
  start(options: WaitOptions): Promise<void> {
    const client = this.settings.client;
    return client.wait(
      async (signal) => {
        if (this.closed) throw new ClosedError(`registration ${this.path}`);
        await this.node.start();
        await this.node.waitForInitialCreate({ signal });
      },
      options,
      `registerService ${this.path}`,
    );
  }

  /** Unregister when `signal` aborts (it is called once; `close` detaches it). */
  closeOn(signal: AbortSignal, unregister: () => void): void {
    signal.addEventListener('abort', unregister, { once: true });
    this.stopSignal = () => signal.removeEventListener('abort', unregister);
  }

  async update(instance: ServiceInstance<unknown>): Promise<void> {
    this.instance = instance;
    await this.node.setData(this.settings.serializer.serialize(instance));
  }

  /** Deletes the node (a guaranteed delete) and stops keeping it. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopSignal?.();
    this.stopSignal = null;
    await this.node.close();
  }
}
