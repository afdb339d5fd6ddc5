/**
 * How the page learns of changes. With `live: 'push'` the page server's one persistent watch feeds
 * an EventSource (`/api/events`: `status`, `overview`, `tree`). With `live: 'polling'` (the server
 * refused persistent watches) the page asks for the overview every `pollMs`, and for the open parts
 * of the tree every third time; the banner says which of the two is at work.
 */
import { api, type Overview, type TreeChange, type UiStatus } from './api.js';

export interface LiveHandlers {
  status(status: UiStatus): void;
  overview(overview: Overview): void;
  tree(change: TreeChange): void;
  /** The link to the page server is down (true) or back (false). */
  offline(down: boolean): void;
}

export function connectLive(status: UiStatus, on: LiveHandlers): void {
  if (status.live === 'push') {
    const events = new EventSource('/api/events');
    events.addEventListener('status', (e) => on.status(JSON.parse((e as MessageEvent<string>).data) as UiStatus));
    events.addEventListener('overview', (e) => on.overview(JSON.parse((e as MessageEvent<string>).data) as Overview));
    events.addEventListener('tree', (e) => on.tree(JSON.parse((e as MessageEvent<string>).data) as TreeChange));
    events.addEventListener('open', () => on.offline(false));
    events.addEventListener('error', () => on.offline(true));
    return;
  }
  let tick = 0;
  let busy = false;
  const poll = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    try {
      on.overview(await api.overview());
      on.offline(false);
      if (++tick % 3 === 0) on.tree({ paths: null });
    } catch {
      on.offline(true);
    } finally {
      busy = false;
    }
  };
  void poll();
  setInterval(() => void poll(), status.pollMs);
}
