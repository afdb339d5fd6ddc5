/**
 * The Tree: a lazy browser (a node's children are listed only when it is opened, a page of 200 at a
 * time, so 100,000 children never reach the page at once) and the selected node's data (text,
 * pretty JSON or hex), Stat and ACL. With `--write`: set data, create a child, delete.
 * Rows are kept per path, so a refresh after a change keeps the opened sub-trees open.
 */
import { ApiError, api, postJson, type ChildEntry, type NodeView, type TreeChange, type UiStatus } from './api.js';
import { h, replace } from './dom.js';
import { bytes, clock } from './format.js';

const PAGE = 200;
type DataMode = 'text' | 'json' | 'hex';

interface Listing {
  entries: ChildEntry[];
  total: number;
}

function base64Bytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** A classic hex dump (offset, 16 bytes, ASCII), the first 64 KiB. */
function hexDump(data: Uint8Array): string {
  const lines: string[] = [];
  const n = Math.min(data.length, 64 * 1024);
  for (let off = 0; off < n; off += 16) {
    const row = data.subarray(off, Math.min(off + 16, n));
    const hex = [...row].map((b) => b.toString(16).padStart(2, '0')).join(' ');
    const ascii = [...row].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${off.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${ascii}`);
  }
  if (data.length > n) lines.push(`… ${data.length - n} more bytes`);
  return lines.join('\n') || '(empty)';
}

function prettyJson(text: string | null): string {
  if (text === null) return '(not text: see hex)';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return '(not JSON)';
  }
}

function childPath(parent: string, name: string): string {
  return parent === '/' ? `/${name}` : `${parent}/${name}`;
}

export class TreeView {
  private readonly root = h('div.tree-view');
  private readonly treePane = h('div.tree-pane');
  private readonly nodePane = h('div.node-pane', null, h('p.muted', null, 'Select a node.'));
  private readonly rows = new Map<string, HTMLLIElement>();
  private readonly listings = new Map<string, Listing>();
  private readonly expanded = new Set<string>(['/']);
  private selected: string | null = null;
  private mode: DataMode = 'text';
  private node: NodeView | null = null;
  private message = '';

  constructor(private status: UiStatus) {
    const rootRow = this.row({ name: '/', path: '/', numChildren: 1, dataLength: 0, ephemeral: false });
    this.treePane.append(h('ul.tree', { role: 'tree' }, rootRow));
    this.root.append(this.treePane, this.nodePane);
  }

  setStatus(status: UiStatus): void {
    this.status = status;
    if (this.node) this.renderNode();
  }

  /** Shows the view (opening `/` the first time) and brings the open parts up to date. */
  mount(container: HTMLElement): void {
    replace(container, this.root);
    void this.refresh({ paths: null });
    if (!this.selected) void this.select('/');
  }

  /** After a change: re-lists the open nodes among the changed paths, and reloads the selected node. */
  async refresh(change: TreeChange): Promise<void> {
    const paths = change.paths === null ? [...this.expanded] : change.paths.filter((p) => this.expanded.has(p));
    await Promise.all(paths.map((p) => this.list(p, Math.max(PAGE, this.listings.get(p)?.entries.length ?? 0))));
    if (this.selected && (change.paths === null || change.paths.includes(this.selected))) await this.select(this.selected, false);
  }

  private row(entry: ChildEntry): HTMLLIElement {
    const li = h('li.tree-node', { 'data-path': entry.path, role: 'treeitem' });
    this.rows.set(entry.path, li);
    this.fillRow(li, entry);
    return li;
  }

  private fillRow(li: HTMLLIElement, entry: ChildEntry): void {
    const open = this.expanded.has(entry.path);
    const toggle =
      entry.numChildren > 0
        ? h('button.toggle', { 'aria-label': open ? 'close' : 'open', onclick: () => void this.toggle(entry.path) }, open ? '▾' : '▸')
        : h('span.toggle.leaf', null, '·');
    const label = h(
      this.selected === entry.path ? 'button.name.selected' : 'button.name',
      { onclick: () => void this.select(entry.path) },
      entry.name,
    );
    const meta = h(
      'span.meta',
      null,
      entry.path !== '/' && entry.numChildren > 0 ? (entry.numChildren === 1 ? '1 child' : `${entry.numChildren} children`) : null,
      entry.dataLength > 0 ? ` ${bytes(entry.dataLength)}` : null,
      entry.ephemeral ? h('span.badge.eph', null, 'ephemeral') : null,
    );
    const kids = li.querySelector(':scope > ul');
    li.replaceChildren(h('div.row', null, toggle, label, meta));
    if (kids && open) li.append(kids);
  }

  private async toggle(path: string): Promise<void> {
    if (this.expanded.has(path)) {
      this.expanded.delete(path);
      this.rows.get(path)?.querySelector(':scope > ul')?.remove();
      this.reFill(path);
      return;
    }
    this.expanded.add(path);
    this.reFill(path);
    await this.list(path, PAGE);
  }

  private reFill(path: string): void {
    const li = this.rows.get(path);
    const parent = path === '/' ? null : path.slice(0, path.lastIndexOf('/')) || '/';
    const entry =
      parent === null
        ? { name: '/', path: '/', numChildren: 1, dataLength: 0, ephemeral: false }
        : this.listings.get(parent)?.entries.find((e) => e.path === path);
    if (li && entry) this.fillRow(li, entry);
  }

  /** Lists the first `count` children of an open node and draws them (reusing the rows of those already drawn). */
  private async list(path: string, count: number): Promise<void> {
    let listing: Listing;
    try {
      const first = await api.children(path, 0, Math.min(count, 1_000));
      listing = { entries: first.children, total: first.total };
      while (listing.entries.length < Math.min(count, listing.total)) {
        const more = await api.children(path, listing.entries.length, Math.min(1_000, count - listing.entries.length));
        if (more.children.length === 0) break;
        listing.entries.push(...more.children);
      }
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        this.expanded.delete(path);
        this.listings.delete(path);
        return;
      }
      throw err;
    }
    if (!this.expanded.has(path)) return;
    this.listings.set(path, listing);
    const li = this.rows.get(path);
    if (!li) return;
    const ul = li.querySelector<HTMLUListElement>(':scope > ul') ?? li.appendChild(h('ul.tree', { role: 'group' }));
    const items: HTMLElement[] = listing.entries.map((entry) => {
      const existing = this.rows.get(entry.path);
      if (existing) {
        this.fillRow(existing, entry);
        return existing;
      }
      return this.row(entry);
    });
    const shown = listing.entries.length;
    if (shown < listing.total) {
      items.push(
        h(
          'li.more',
          null,
          h(
            'button',
            { onclick: () => void this.list(path, shown + PAGE) },
            `show ${Math.min(PAGE, listing.total - shown)} more of ${listing.total - shown} not shown`,
          ),
        ),
      );
    }
    ul.replaceChildren(...items);
  }

  private async select(path: string, resetMessage = true): Promise<void> {
    const previous = this.selected;
    this.selected = path;
    if (previous !== path) {
      this.rows
        .get(previous ?? '')
        ?.querySelector('.name')
        ?.classList.remove('selected');
      this.rows.get(path)?.querySelector('.name')?.classList.add('selected');
    }
    if (resetMessage) this.message = '';
    try {
      this.node = await api.node(path);
    } catch (err) {
      this.node = null;
      replace(this.nodePane, h('p.error', null, `${path}: ${err instanceof Error ? err.message : String(err)}`));
      return;
    }
    if (this.selected === path) this.renderNode();
  }

  private renderNode(): void {
    const node = this.node;
    if (!node) return;
    const data = base64Bytes(node.data);
    const shown =
      this.mode === 'hex' ? hexDump(data) : this.mode === 'json' ? prettyJson(node.text) : (node.text ?? '(not UTF-8 text: see hex)');
    const tab = (mode: DataMode, label: string): HTMLElement =>
      h(
        this.mode === mode ? 'button.tab.active' : 'button.tab',
        {
          'data-mode': mode,
          onclick: () => {
            this.mode = mode;
            this.renderNode();
          },
        },
        label,
      );
    const s = node.stat;
    const statRows: [string, string][] = [
      ['czxid', s.czxid],
      ['mzxid', s.mzxid],
      ['pzxid', s.pzxid],
      ['ctime', `${new Date(s.ctime).toISOString()} (${clock(s.ctime)})`],
      ['mtime', `${new Date(s.mtime).toISOString()} (${clock(s.mtime)})`],
      ['version', String(s.version)],
      ['cversion', String(s.cversion)],
      ['aversion', String(s.aversion)],
      ['ephemeralOwner', s.ephemeralOwner],
      ['dataLength', String(s.dataLength)],
      ['numChildren', String(s.numChildren)],
    ];
    replace(
      this.nodePane,
      h('h2.node-path', { 'data-node-path': node.path }, h('code', null, node.path)),
      h('div.tabs', null, tab('text', 'Text'), tab('json', 'JSON'), tab('hex', 'Hex'), h('span.meta', null, bytes(data.length))),
      data.length === 0
        ? h('p.muted.empty-data', { 'data-view': this.mode }, '(no data)')
        : h('pre.data', { 'data-view': this.mode }, shown),
      h(
        'div.columns',
        null,
        h(
          'div',
          null,
          h('h3', null, 'Stat'),
          h(
            'table.grid.stat',
            null,
            h(
              'tbody',
              null,
              statRows.map(([k, v]) => h('tr', null, h('th', null, k), h('td', null, h('code', null, v)))),
            ),
          ),
        ),
        h(
          'div',
          null,
          h('h3', null, 'ACL'),
          node.aclError
            ? h('p.error', null, node.aclError)
            : h(
                'table.grid.acl',
                null,
                h('thead', null, h('tr', null, h('th', null, 'scheme'), h('th', null, 'id'), h('th', null, 'perms'))),
                h(
                  'tbody',
                  null,
                  node.acl.map((a) =>
                    h(
                      'tr',
                      null,
                      h('td', null, a.scheme),
                      h('td', null, h('code', null, a.id)),
                      h('td', null, h('code', null, a.permString)),
                    ),
                  ),
                ),
              ),
        ),
      ),
      this.status.write
        ? this.writeControls(node)
        : h('p.muted.read-only-note', null, 'Read-only: start `tenure ui` with --write to edit nodes.'),
    );
  }

  private writeControls(node: NodeView): HTMLElement {
    const text = h('textarea.edit', { rows: 4, 'aria-label': 'data' });
    text.value = node.text ?? '';
    const childName = h('input', { placeholder: 'child name', 'aria-label': 'child name' });
    const childData = h('input', { placeholder: 'data (UTF-8)', 'aria-label': 'child data' });
    const recursive = h('input', { type: 'checkbox', 'aria-label': 'with children' });
    const run = async (what: () => Promise<unknown>, done: string): Promise<void> => {
      try {
        await what();
        this.message = done;
      } catch (err) {
        this.message = `refused: ${err instanceof Error ? err.message : String(err)}`;
      }
      await this.refresh({ paths: null });
      if (this.selected) await this.select(this.selected, false);
    };
    return h(
      'section.write',
      null,
      h('h3', null, 'Change'),
      this.message ? h('p.message', null, this.message) : null,
      text,
      h(
        'button',
        {
          onclick: () =>
            void run(
              () => postJson('/api/set', { path: node.path, data: text.value, encoding: 'utf8', version: node.stat.version }),
              'saved',
            ),
        },
        `Save (if still version ${node.stat.version})`,
      ),
      h(
        'div.inline',
        null,
        childName,
        childData,
        h(
          'button',
          {
            onclick: () =>
              void run(
                () => postJson('/api/create', { path: childPath(node.path, childName.value), data: childData.value, encoding: 'utf8' }),
                'created',
              ),
          },
          'Create child',
        ),
      ),
      node.path === '/'
        ? null
        : h(
            'div.inline',
            null,
            h('label', null, recursive, ' with children'),
            h(
              'button.danger',
              {
                onclick: () => {
                  if (!confirm(`Delete ${node.path}${recursive.checked ? ' and everything under it' : ''}?`)) return;
                  const parent = node.path.slice(0, node.path.lastIndexOf('/')) || '/';
                  void run(
                    () => postJson('/api/delete', { path: node.path, version: node.stat.version, recursive: recursive.checked }),
                    'deleted',
                  ).then(() => this.select(parent));
                },
              },
              'Delete',
            ),
          ),
    );
  }
}
