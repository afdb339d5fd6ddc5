/**
 * The mirror: the server's tree kept equal to the store's namespace, revision by revision. A
 * revision this server committed fires the watch triggers its evaluation recorded, in the request
 * processor's order; any other revision (another server's write, a lease expiry, a resync) fires
 * them in a fixed order: deletes deepest first, then creates shallowest first, then data changes.
 * Stats are the store's: what the store says a node's counters are, the mirror shows.
 */
import type { DataTree } from '../semantics/data-tree.js';
import type { ZxidCounter } from '../semantics/request-processor.js';
import type { WatchRegistry } from '../semantics/watch-registry.js';
import type { ZNode } from '../semantics/znode.js';
import type { ChildrenRecord, NodeRecord, RevisionChange, StoreSnapshot } from './replicated-store.js';
import type { WatchNote } from './write-trial.js';

const VIRTUAL = new Set(['/zookeeper', '/zookeeper/quota', '/zookeeper/config']);

const depth = (path: string): number => (path === '/' ? 0 : path.split('/').length - 1);

function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

export class Mirror {
  constructor(
    private readonly tree: DataTree,
    private readonly watches: WatchRegistry,
    private readonly zxid: ZxidCounter,
  ) {}

  /** Loads a snapshot into the (fresh) tree. */
  load(snap: StoreSnapshot): void {
    const paths = [...snap.nodes.keys()].sort((a, b) => depth(a) - depth(b));
    for (const path of paths) {
      if (VIRTUAL.has(path)) continue;
      const rec = snap.nodes.get(path)!;
      if (path === '/') this.update(this.tree.get('/')!, rec);
      else if (this.tree.nodes.has(parentOf(path))) this.create(path, rec);
    }
    for (const [path, c] of snap.children) this.setChildren(path, c);
    this.zxid.last = snap.revision;
  }

  /** Applies one revision and fires its watches (`notes` when this server committed it). */
  apply(change: RevisionChange, notes: WatchNote[] | undefined): void {
    const tree = this.tree;
    const rev = change.revision;
    const canonical: WatchNote[] = [];
    const changedData: WatchNote[] = [];
    // Parents whose counters the tree moved: restored unless the store wrote them at this revision.
    const parents = new Map<string, { cversion: number; pzxid: bigint }>();
    const touchParent = (path: string): void => {
      const p = parentOf(path);
      const node = tree.nodes.get(p);
      if (node !== undefined && !parents.has(p)) parents.set(p, { cversion: node.cversion, pzxid: node.pzxid });
    };
    const remove = (path: string): void => {
      const node = tree.nodes.get(path);
      if (node === undefined) return;
      for (const child of [...node.children]) remove(path === '/' ? `/${child}` : `${path}/${child}`);
      touchParent(path);
      const acl = node.acl;
      const parentAcl = tree.parentAcl(path);
      tree.delete(path, rev);
      canonical.push({ kind: 'deleted', path, acl, parentAcl });
    };
    const deletes = [...change.nodes].filter(([p, r]) => r === null && p !== '/' && !VIRTUAL.has(p)).map(([p]) => p);
    deletes.sort((a, b) => depth(b) - depth(a));
    for (const path of deletes) remove(path);
    const puts = [...change.nodes].filter(([p, r]) => r !== null && !VIRTUAL.has(p)) as Array<[string, NodeRecord]>;
    puts.sort((a, b) => depth(a[0]) - depth(b[0]));
    for (const [path, rec] of puts) {
      const existing = tree.nodes.get(path);
      if (path === '/') {
        if (this.update(existing!, rec)) changedData.push({ kind: 'changed', path, acl: existing!.acl });
        continue;
      }
      if (existing !== undefined && existing.czxid !== rec.czxid) remove(path);
      const node = tree.nodes.get(path);
      if (node === undefined) {
        if (!tree.nodes.has(parentOf(path))) continue; // its parent is gone: the store cannot hold this
        touchParent(path);
        this.create(path, rec);
        canonical.push({ kind: 'created', path, acl: rec.acl, parentAcl: tree.parentAcl(path) });
      } else if (this.update(node, rec)) {
        changedData.push({ kind: 'changed', path, acl: node.acl });
      }
    }
    for (const [path, prev] of parents) {
      if (change.children.has(path)) continue;
      const node = tree.nodes.get(path);
      if (node === undefined) continue;
      node.cversion = prev.cversion;
      node.pzxid = prev.pzxid;
    }
    for (const [path, c] of change.children) if (c !== null) this.setChildren(path, c);
    if (rev > this.zxid.last) this.zxid.last = rev;
    let fired = notes ?? [...canonical, ...changedData];
    if (notes === undefined && change.order !== undefined) {
      // Another server's commit: its processor's order.
      const rank = new Map(change.order.map(([k, p], i) => [`${k}${p}`, i]));
      const key = (n: WatchNote): number =>
        rank.get(`${n.kind === 'created' ? 'c' : n.kind === 'deleted' ? 'd' : 'm'}${n.path}`) ?? rank.size;
      fired = [...fired].sort((a, b) => key(a) - key(b));
    }
    for (const note of fired) {
      if (note.kind === 'changed') this.watches.changed(note.path, rev, note.acl);
      else if (note.kind === 'created') this.watches.created(note.path, rev, note.acl, note.parentAcl);
      else this.watches.deleted(note.path, rev, note.acl, note.parentAcl);
    }
  }

  private create(path: string, rec: NodeRecord): ZNode {
    const node = this.tree.create(path, rec.data, rec.acl, rec.ephemeralOwner, rec.czxid, rec.ctime);
    this.update(node, rec);
    return node;
  }

  /** Sets a node's fields from its record; whether its data version moved (a NodeDataChanged). */
  private update(node: ZNode, rec: NodeRecord): boolean {
    const dataChanged = node.version !== rec.version || node.mzxid !== rec.mzxid;
    node.data = rec.data;
    node.acl = rec.acl;
    node.version = rec.version;
    node.aversion = rec.aversion;
    node.mtime = rec.mtime;
    node.mzxid = rec.mzxid;
    return dataChanged;
  }

  private setChildren(path: string, c: ChildrenRecord): void {
    const node = this.tree.nodes.get(path);
    if (node === undefined) return;
    node.cversion = c.cversion;
    node.pzxid = c.pzxid;
  }
}
