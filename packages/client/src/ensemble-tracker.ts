/**
 * Ensemble tracking (Curator's EnsembleTracker): after every (re)connect the client reads
 * /zookeeper/config; when it names client addresses (a 3.5+ dynamic ensemble) the client keeps a
 * watch on it and, at each change, hands the members' client addresses to `apply`, which updates
 * the host list (ZooKeeper's rebalancing: see host-provider.ts).
 *
 * A config that names no client address (a standalone server, a static ensemble) leaves the hosts
 * alone and sets no watch, so such servers see no watch from this client. Reads run as background
 * work of the client (retried under its policy, ended by close).
 */
import { ConnectionState } from './connection-state.js';
import { CONFIG_NODE, clientHostsOf, configVersion, type EnsembleConfig } from './ensemble-config.js';
import type { Logger } from './logger.js';
import type { WatchCallback } from './watch-events.js';

export interface EnsembleTrackerHost {
  readonly logger: Logger;
  /** Reads the config once (with a one-shot watch when `watch` is given). */
  readConfig(watch: WatchCallback | undefined, signal: AbortSignal): Promise<EnsembleConfig>;
  /** Background work, retried, ended by close. */
  spawn(what: string, task: (signal: AbortSignal) => Promise<void>): Promise<void>;
  /** The host list the config names. */
  apply(hosts: readonly string[], config: EnsembleConfig): void;
}

export class EnsembleTracker {
  private watching = false;
  private running = false;
  private again = false;
  private lastVersion = -1n;
  private readonly onChange: WatchCallback = (event) => {
    if (event.type === 'NodeDataChanged' || event.type === 'NodeCreated') this.refresh();
  };

  constructor(private readonly host: EnsembleTrackerHost) {}

  /** The client's connection state changed. */
  stateChanged(state: ConnectionState): void {
    if (state === ConnectionState.CONNECTED || state === ConnectionState.RECONNECTED || state === ConnectionState.READ_ONLY) {
      if (state !== ConnectionState.RECONNECTED) this.watching = false; // a new session holds no watch of ours
      this.refresh();
    }
  }

  /** The latest config seen with client addresses, as its version (−1n before any). */
  get version(): bigint {
    return this.lastVersion;
  }

  private refresh(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- spawn never rejects (failures are logged)
    void this.host
      .spawn('ensemble tracker', async (signal) => {
        do {
          this.again = false;
          await this.readOnce(signal);
        } while (this.again && !signal.aborted);
      })
      .finally(() => {
        this.running = false;
      });
  }

  private async readOnce(signal: AbortSignal): Promise<void> {
    let config = await this.host.readConfig(this.watching ? this.onChange : undefined, signal);
    if (clientHostsOf(config).length === 0) return;
    if (!this.watching) {
      // A dynamic ensemble: from now on keep a watch (read again with it, so no change is missed).
      this.watching = true;
      config = await this.host.readConfig(this.onChange, signal);
    }
    const hosts = clientHostsOf(config);
    if (hosts.length === 0) return;
    const version = configVersion(config);
    if (version < this.lastVersion) return; // an older config read from a lagging server
    this.lastVersion = version;
    this.host.logger.debug({ version: config.version, hosts, path: CONFIG_NODE }, 'ensemble config');
    this.host.apply(hosts, config);
  }
}
