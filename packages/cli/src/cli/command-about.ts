/**
 * What each command is for, as `help` and the README say it: the synopsis, one line, an example.
 * The specs take their name and these texts from here (`...about(name)`).
 */
import { InvalidArgumentError } from '@tenure/client';

interface About {
  readonly name: string;
  readonly synopsis: string;
  readonly summary: string;
  readonly example?: string;
}

const ABOUT: Record<string, Omit<About, 'name'>> = {
  ls: {
    synopsis: 'ls [-R] [-s] [--limit N] PATH',
    summary: 'list the children of PATH (-R: every path below it; -s: with the Stat)',
    example: 'tenure ls -R /locks',
  },
  get: {
    synopsis: 'get [-s] PATH',
    summary: "print PATH's data (UTF-8 text, else base64:…); -s adds the Stat",
    example: 'tenure get -s /config/app',
  },
  set: {
    synopsis: 'set [-s] [-v VERSION] [--base64] PATH DATA',
    summary: "set PATH's data (only at VERSION with -v); -s prints the new Stat",
    example: 'tenure set -v 3 /config/app "mode=fast"',
  },
  create: {
    synopsis: 'create [-e] [-s] [-c] [-t TTL_MS] [-p] [--acl ACL] [--base64] PATH [DATA]',
    summary: 'create PATH: -e ephemeral, -s sequential, -c container, -t TTL (ms), -p with missing parents',
    example: 'tenure create -s /queues/jobs/job- "payload"',
  },
  delete: {
    synopsis: 'delete [-v VERSION] [--recursive] PATH',
    summary: 'delete PATH (--recursive: and everything below it)',
    example: 'tenure delete --recursive /tmp/build-42',
  },
  deleteall: {
    synopsis: 'deleteall PATH',
    summary: "zkCli's name for delete --recursive",
  },
  stat: {
    synopsis: 'stat PATH',
    summary: "print PATH's Stat (zxids, versions, owner, sizes)",
    example: 'tenure stat /locks/orders',
  },
  getAcl: {
    synopsis: 'getAcl PATH',
    summary: "print PATH's ACL, one scheme:id:perms per line",
    example: 'tenure getAcl /config',
  },
  setAcl: {
    synopsis: 'setAcl [-v ACL_VERSION] PATH ACL',
    summary: "set PATH's ACL, e.g. world:anyone:r,digest:admin:<hash>:cdrwa",
    example: 'tenure setAcl /config world:anyone:r,auth::cdrwa',
  },
  tree: {
    synopsis: 'tree [--limit N] [PATH]',
    summary: 'draw the tree under PATH (default /) with each node’s data size',
    example: 'tenure tree /app',
  },
  find: {
    synopsis: 'find [--limit N] PATTERN [PATH]',
    summary: 'paths under PATH (default /) whose name matches PATTERN (*, ?, **); a PATTERN with / matches whole paths',
    example: "tenure find '*-lock-*' /locks",
  },
  watch: {
    synopsis: 'watch PATH',
    summary: 'print every change under PATH (a persistent recursive watch) until Ctrl-C; --json streams one JSON array',
    example: 'tenure watch /locks',
  },
  dump: {
    synopsis: 'dump [--limit N] [PATH] --json > tree.json',
    summary: 'write the tree under PATH (default /) as one JSON document: data base64, ACLs, modes',
    example: 'tenure dump /app --json > app.json',
  },
  import: {
    synopsis: 'import [--overwrite] [--ephemerals skip|persistent] FILE [PATH]',
    summary: "create the nodes of a dump file (- for stdin) at PATH (default the dump's root); ACLs and modes kept",
    example: 'tenure import app.json /app-copy',
  },
  locks: {
    synopsis: 'locks [--limit N] [PATH]',
    summary: 'each lock (Mutex, ReadWriteLock, Semaphore; Curator or Tenure) with its holder and waiters in queue order',
    example: 'tenure locks /locks',
  },
  leaders: {
    synopsis: 'leaders [--limit N] [PATH]',
    summary: 'each election (LeaderLatch; LeaderSelector, whose nodes are a mutex’s) with its leader, participants and observers (wchp)',
    example: 'tenure leaders /election',
  },
  groups: {
    synopsis: 'groups [--limit N] [PATH]',
    summary: 'each group (GroupMember: ephemeral children of a path) with its members',
    example: 'tenure groups /groups',
  },
  services: {
    synopsis: 'services [--limit N] [PATH]',
    summary: 'the service discovery registry (curator-x-discovery: <base>/<name>/<id> with JSON)',
    example: 'tenure services',
  },
  partitions: {
    synopsis: 'partitions [--limit N] [PATH]',
    summary: "each partitioned set (kazoo's SetPartitioner: <path>/party, <path>/locks/<item>) with its members and each item's holder",
    example: 'tenure partitions /work',
  },
  leases: {
    synopsis: 'leases [--limit N] [PATH]',
    summary: "each timed lease (kazoo's NonBlockingLease, MultiNonBlockingLease: <path>/lease_holder) with its holder and time left",
    example: 'tenure leases /cron',
  },
  queues: {
    synopsis: 'queues [--limit N] [PATH]',
    summary: 'each queue (DistributedQueue family, SimpleDistributedQueue) with its depth and oldest item',
    example: 'tenure queues /queues',
  },
  sessions: {
    synopsis: 'sessions [--limit N]',
    summary: 'each session with its client address, timeout and ephemerals (four-letter words cons and dump, where the server allows them)',
    example: 'tenure sessions',
  },
  ui: {
    synopsis: 'ui [--port 8181] [--host 127.0.0.1] [--write] [--ui-auth user:password] [--limit N] [PATH]',
    summary:
      'serve a live web page of locks, elections, groups, services, queues, sessions and the tree (read-only unless --write) until Ctrl-C',
    example: 'tenure --server zk1:2181 ui --port 8181',
  },
  config: {
    synopsis: 'config',
    summary: "the ensemble's dynamic config (/zookeeper/config): members, roles, client addresses, version",
    example: 'tenure --server zk1:2181 config',
  },
  reconfig: {
    synopsis: 'reconfig [--add server.N=host:q:e[:role][;clientPort]]... [--remove ID]... [--members LINE]... [--from VERSION]',
    summary: 'change the ensemble (ZooKeeper 3.5+ reconfig; needs a super user or skipACL) and print the new config',
    example: "tenure --auth digest:super:secret reconfig --remove 3 --add 'server.4=10.0.0.4:2888:3888:participant;2181'",
  },
};

/** The name and texts of command `name`. */
export function about(name: string): About {
  const a = ABOUT[name];
  if (a === undefined) throw new InvalidArgumentError(`no help text for command ${name}`);
  return { name, ...a };
}
