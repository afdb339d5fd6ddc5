/**
 * Test fixtures: one or more example of every request and response record, and fast-check
 * arbitraries that generate any of them. Shared by the round-trip, malformed-input and fuzz suites.
 */
import fc from 'fast-check';
import {
  AddWatchMode,
  CreateMode,
  ErrorCode,
  OPEN_ACL_UNSAFE,
  OpCode,
  Perms,
  WatcherType,
  type ACL,
  type MultiOp,
  type MultiResult,
  type Request,
  type Response,
  type Stat,
} from '@tenure/protocol';

export const stat: Stat = {
  czxid: 0x1_0000_0002n,
  mzxid: 0x1_0000_0007n,
  ctime: 1_764_504_000_123,
  mtime: 1_764_504_999_456,
  version: 3,
  cversion: 5,
  aversion: 1,
  ephemeralOwner: 0x0100_0000_0000_002an,
  dataLength: 2,
  numChildren: 4,
  pzxid: 0x1_0000_0009n,
};
/** Extreme values: negative longs, the container owner, times before the epoch. */
export const oddStat: Stat = {
  czxid: -1n,
  mzxid: 0x7fff_ffff_ffff_ffffn,
  ctime: -1,
  mtime: Number.MAX_SAFE_INTEGER,
  version: -1,
  cversion: -2147483648,
  aversion: 2147483647,
  ephemeralOwner: -0x8000_0000_0000_0000n,
  dataLength: 0,
  numChildren: 0,
  pzxid: 0n,
};

const digestAcl: ACL = { perms: Perms.READ | Perms.ADMIN, id: { scheme: 'digest', id: 'bob:fyVmFCwVbTJYrznoSu1koqYEYF0=' } };
const acl: ACL[] = [...OPEN_ACL_UNSAFE, digestAcl];
const data = Buffer.from('hello, zookeeper');
const empty = Buffer.alloc(0);

/** [name, request]: every op, with null/empty variants of nullable fields. */
export const requestCases: Array<[string, Request]> = [
  ['create', { type: OpCode.create, path: '/app', data, acl, flags: CreateMode.PERSISTENT }],
  ['create null data', { type: OpCode.create, path: '/app', data: null, acl, flags: CreateMode.EPHEMERAL }],
  ['create empty data', { type: OpCode.create, path: '/app', data: empty, acl, flags: CreateMode.EPHEMERAL }],
  ['create empty acl', { type: OpCode.create, path: '/app', data, acl: [], flags: 0 }],
  ['create sequential trailing /', { type: OpCode.create, path: '/r/', data, acl, flags: CreateMode.PERSISTENT_SEQUENTIAL }],
  ['create2', { type: OpCode.create2, path: '/a/b-', data, acl, flags: CreateMode.EPHEMERAL_SEQUENTIAL }],
  ['createContainer', { type: OpCode.createContainer, path: '/c', data: null, acl, flags: CreateMode.CONTAINER }],
  ['createTTL', { type: OpCode.createTTL, path: '/t', data, acl, flags: CreateMode.PERSISTENT_WITH_TTL, ttl: 60_000n }],
  [
    'createTTL max ttl',
    { type: OpCode.createTTL, path: '/t-', data: empty, acl, flags: CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL, ttl: 0xff_ffff_ffffn },
  ],
  ['delete', { type: OpCode.delete, path: '/a', version: -1 }],
  ['exists', { type: OpCode.exists, path: '/a', watch: true }],
  ['exists no watch', { type: OpCode.exists, path: '/a', watch: false }],
  ['getData', { type: OpCode.getData, path: '/foo', watch: false }],
  ['getData unicode path', { type: OpCode.getData, path: '/ü/日本/€', watch: true }],
  ['getData config', { type: OpCode.getData, path: '/zookeeper/config', watch: true }],
  ['setData', { type: OpCode.setData, path: '/a', data, version: 7 }],
  ['setData null', { type: OpCode.setData, path: '/a', data: null, version: -1 }],
  ['setData empty', { type: OpCode.setData, path: '/a', data: empty, version: -1 }],
  ['getACL', { type: OpCode.getACL, path: '/a' }],
  ['setACL', { type: OpCode.setACL, path: '/a', acl, version: 0 }],
  ['getChildren', { type: OpCode.getChildren, path: '/', watch: true }],
  ['getChildren2', { type: OpCode.getChildren2, path: '/a', watch: false }],
  ['sync', { type: OpCode.sync, path: '/a' }],
  ['check', { type: OpCode.check, path: '/a', version: 3 }],
  ['ping', { type: OpCode.ping }],
  ['closeSession', { type: OpCode.closeSession }],
  ['whoAmI', { type: OpCode.whoAmI }],
  [
    'multi of every write op',
    {
      type: OpCode.multi,
      ops: [
        { type: OpCode.create, path: '/m', data, acl, flags: 0 },
        { type: OpCode.create2, path: '/m/n', data: null, acl, flags: 1 },
        { type: OpCode.createContainer, path: '/m/c', data: empty, acl, flags: 4 },
        { type: OpCode.createTTL, path: '/m/t', data, acl, flags: 5, ttl: 1000n },
        { type: OpCode.setData, path: '/m', data: null, version: 0 },
        { type: OpCode.check, path: '/m', version: 1 },
        { type: OpCode.delete, path: '/m/n', version: -1 },
      ],
    },
  ],
  ['multi empty', { type: OpCode.multi, ops: [] }],
  [
    'multiRead',
    {
      type: OpCode.multiRead,
      ops: [
        { type: OpCode.getData, path: '/a', watch: false },
        { type: OpCode.getChildren, path: '/b', watch: false },
      ],
    },
  ],
  ['multiRead empty', { type: OpCode.multiRead, ops: [] }],
  ['setWatches', { type: OpCode.setWatches, relativeZxid: 42n, dataWatches: ['/a', '/b'], existWatches: ['/c'], childWatches: [] }],
  ['setWatches all empty', { type: OpCode.setWatches, relativeZxid: 0n, dataWatches: [], existWatches: [], childWatches: [] }],
  [
    'setWatches2',
    {
      type: OpCode.setWatches2,
      relativeZxid: -1n,
      dataWatches: ['/a'],
      existWatches: [],
      childWatches: ['/b'],
      persistentWatches: ['/p'],
      persistentRecursiveWatches: ['/r', '/r2'],
    },
  ],
  ['addWatch persistent', { type: OpCode.addWatch, path: '/w', mode: AddWatchMode.PERSISTENT }],
  ['addWatch recursive', { type: OpCode.addWatch, path: '/w', mode: AddWatchMode.PERSISTENT_RECURSIVE }],
  ['removeWatches', { type: OpCode.removeWatches, path: '/w', watcherType: WatcherType.Any }],
  ['checkWatches', { type: OpCode.checkWatches, path: '/w', watcherType: WatcherType.Data }],
  ['getEphemerals', { type: OpCode.getEphemerals, prefixPath: '/locks' }],
  ['getEphemerals all', { type: OpCode.getEphemerals, prefixPath: '' }],
  ['getAllChildrenNumber', { type: OpCode.getAllChildrenNumber, path: '/' }],
  ['auth', { type: OpCode.auth, authType: 0, scheme: 'digest', auth: Buffer.from('bob:secret') }],
  ['auth null', { type: OpCode.auth, authType: 0, scheme: 'ip', auth: null }],
  ['auth empty', { type: OpCode.auth, authType: 0, scheme: 'world', auth: empty }],
  [
    'reconfig',
    { type: OpCode.reconfig, joiningServers: 'server.4=h4:2888:3888;2181', leavingServers: '2', newMembers: null, curConfigId: -1n },
  ],
  ['reconfig nulls', { type: OpCode.reconfig, joiningServers: null, leavingServers: null, newMembers: null, curConfigId: 0n }],
  ['reconfig empties', { type: OpCode.reconfig, joiningServers: '', leavingServers: '', newMembers: '', curConfigId: 9n }],
  ['sasl', { type: OpCode.sasl, token: Buffer.from([1, 2, 3, 255]) }],
  ['sasl null', { type: OpCode.sasl, token: null }],
];

const children = ['a', 'b', 'lock-0000000001'];

/** [name, opType, response]: every op's successful reply (undefined where the header is the whole reply). */
export const responseCases: Array<[string, number, Response | undefined]> = [
  ['create', OpCode.create, { path: '/app' }],
  ['create sequential', OpCode.create, { path: '/r/0000000001' }],
  ['create2', OpCode.create2, { path: '/a/b-0000000000', stat }],
  ['createContainer', OpCode.createContainer, { path: '/c', stat: { ...stat, ephemeralOwner: -0x8000_0000_0000_0000n } }],
  ['createTTL', OpCode.createTTL, { path: '/t', stat: oddStat }],
  ['delete', OpCode.delete, undefined],
  ['exists', OpCode.exists, { stat }],
  ['getData', OpCode.getData, { data, stat }],
  ['getData null', OpCode.getData, { data: null, stat }],
  ['getData empty', OpCode.getData, { data: empty, stat: oddStat }],
  ['getData 100 KiB', OpCode.getData, { data: Buffer.alloc(100 * 1024, 7), stat }],
  ['setData', OpCode.setData, { stat }],
  ['getACL', OpCode.getACL, { acl, stat }],
  ['getACL empty', OpCode.getACL, { acl: [], stat }],
  ['setACL', OpCode.setACL, { stat }],
  ['getChildren', OpCode.getChildren, { children }],
  ['getChildren empty', OpCode.getChildren, { children: [] }],
  ['getChildren2', OpCode.getChildren2, { children, stat }],
  ['sync', OpCode.sync, { path: '/a' }],
  ['ping', OpCode.ping, undefined],
  ['check', OpCode.check, undefined],
  ['reconfig', OpCode.reconfig, { data: Buffer.from('server.1=h1:2888:3888;2181\nversion=100000000'), stat }],
  ['checkWatches', OpCode.checkWatches, undefined],
  ['removeWatches', OpCode.removeWatches, undefined],
  ['auth', OpCode.auth, undefined],
  ['setWatches', OpCode.setWatches, undefined],
  ['setWatches2', OpCode.setWatches2, undefined],
  ['sasl', OpCode.sasl, { token: Buffer.from('challenge') }],
  ['sasl null', OpCode.sasl, { token: null }],
  ['getEphemerals', OpCode.getEphemerals, { ephemerals: ['/locks/a', '/e'] }],
  ['getEphemerals empty', OpCode.getEphemerals, { ephemerals: [] }],
  ['getAllChildrenNumber', OpCode.getAllChildrenNumber, { totalNumber: 12345 }],
  ['addWatch', OpCode.addWatch, { err: 0 }],
  [
    'whoAmI',
    OpCode.whoAmI,
    {
      clientInfo: [
        { authScheme: 'digest', user: 'bob' },
        { authScheme: 'ip', user: '127.0.0.1' },
      ],
    },
  ],
  ['whoAmI empty', OpCode.whoAmI, { clientInfo: [] }],
  ['closeSession', OpCode.closeSession, undefined],
  [
    'multi success',
    OpCode.multi,
    {
      results: [
        { type: OpCode.create, path: '/m' },
        { type: OpCode.create2, path: '/m/n', stat },
        { type: OpCode.setData, stat },
        { type: OpCode.check },
        { type: OpCode.delete },
      ],
    },
  ],
  [
    'multi failed (0, BADVERSION, RUNTIMEINCONSISTENCY)',
    OpCode.multi,
    {
      results: [
        { type: OpCode.error, err: ErrorCode.OK },
        { type: OpCode.error, err: ErrorCode.BADVERSION },
        { type: OpCode.error, err: ErrorCode.RUNTIMEINCONSISTENCY },
      ],
    },
  ],
  ['multi empty', OpCode.multi, { results: [] }],
  [
    'multiRead mixed',
    OpCode.multiRead,
    {
      results: [
        { type: OpCode.getData, data, stat },
        { type: OpCode.getData, data: null, stat },
        { type: OpCode.getChildren, children },
        { type: OpCode.getChildren, children: [] },
        { type: OpCode.error, err: ErrorCode.NONODE },
      ],
    },
  ],
];

// ---- fast-check arbitraries ----

const int = fc.integer();
const long = fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n });
const str = fc.string({ unit: 'grapheme', maxLength: 16 });
const buf = fc.uint8Array({ maxLength: 40 }).map((u) => Buffer.from(u));
const nullableBuf = fc.option(buf, { nil: null });
const nullableStr = fc.option(str, { nil: null });
const strs = fc.array(str, { maxLength: 5 });
const aclArb = fc.record({ perms: int, id: fc.record({ scheme: str, id: str }) });
const acls = fc.array(aclArb, { maxLength: 3 });

export const statArb: fc.Arbitrary<Stat> = fc.record({
  czxid: long,
  mzxid: long,
  ctime: fc.maxSafeInteger(),
  mtime: fc.maxSafeInteger(),
  version: int,
  cversion: int,
  aversion: int,
  ephemeralOwner: long,
  dataLength: int,
  numChildren: int,
  pzxid: long,
});

const createArb = fc.record({
  type: fc.constantFrom(OpCode.create, OpCode.create2, OpCode.createContainer),
  path: str,
  data: nullableBuf,
  acl: acls,
  flags: int,
});
const createTtlArb = fc.record({ type: fc.constant(OpCode.createTTL), path: str, data: nullableBuf, acl: acls, flags: int, ttl: long });
const versionedArb = fc.record({ type: fc.constantFrom(OpCode.delete, OpCode.check), path: str, version: int });
const pathWatchArb = fc.record({
  type: fc.constantFrom(OpCode.exists, OpCode.getData, OpCode.getChildren, OpCode.getChildren2),
  path: str,
  watch: fc.boolean(),
});
const setDataArb = fc.record({ type: fc.constant(OpCode.setData), path: str, data: nullableBuf, version: int });

const multiWriteOp: fc.Arbitrary<MultiOp> = fc.oneof(createArb, createTtlArb, versionedArb, setDataArb) as fc.Arbitrary<MultiOp>;
const multiReadOp: fc.Arbitrary<MultiOp> = fc.record({
  type: fc.constantFrom(OpCode.getData, OpCode.getChildren),
  path: str,
  watch: fc.boolean(),
}) as fc.Arbitrary<MultiOp>;

/** Any request record the codec knows. */
export const requestArb: fc.Arbitrary<Request> = fc.oneof(
  createArb,
  createTtlArb,
  versionedArb,
  pathWatchArb,
  setDataArb,
  fc.record({ type: fc.constantFrom(OpCode.getACL, OpCode.sync, OpCode.getAllChildrenNumber), path: str }),
  fc.record({ type: fc.constant(OpCode.setACL), path: str, acl: acls, version: int }),
  fc.record({ type: fc.constant(OpCode.multi), ops: fc.array(multiWriteOp, { maxLength: 5 }) }),
  fc.record({ type: fc.constant(OpCode.multiRead), ops: fc.array(multiReadOp, { maxLength: 5 }) }),
  fc.record({ type: fc.constant(OpCode.setWatches), relativeZxid: long, dataWatches: strs, existWatches: strs, childWatches: strs }),
  fc.record({
    type: fc.constant(OpCode.setWatches2),
    relativeZxid: long,
    dataWatches: strs,
    existWatches: strs,
    childWatches: strs,
    persistentWatches: strs,
    persistentRecursiveWatches: strs,
  }),
  fc.record({ type: fc.constant(OpCode.addWatch), path: str, mode: int }),
  fc.record({ type: fc.constantFrom(OpCode.removeWatches, OpCode.checkWatches), path: str, watcherType: int }),
  fc.record({ type: fc.constant(OpCode.getEphemerals), prefixPath: str }),
  fc.record({ type: fc.constant(OpCode.auth), authType: int, scheme: str, auth: nullableBuf }),
  fc.record({
    type: fc.constant(OpCode.reconfig),
    joiningServers: nullableStr,
    leavingServers: nullableStr,
    newMembers: nullableStr,
    curConfigId: long,
  }),
  fc.record({ type: fc.constant(OpCode.sasl), token: nullableBuf }),
  fc.record({ type: fc.constantFrom(OpCode.ping, OpCode.closeSession, OpCode.whoAmI) }),
) as fc.Arbitrary<Request>;

const multiResultArb: fc.Arbitrary<MultiResult> = fc.oneof(
  fc.record({ type: fc.constant(OpCode.create), path: str }),
  fc.record({ type: fc.constant(OpCode.create2), path: str, stat: statArb }),
  fc.record({ type: fc.constantFrom(OpCode.delete, OpCode.check) }),
  fc.record({ type: fc.constant(OpCode.setData), stat: statArb }),
  fc.record({ type: fc.constant(OpCode.getData), data: nullableBuf, stat: statArb }),
  fc.record({ type: fc.constant(OpCode.getChildren), children: strs }),
  fc.record({ type: fc.constant(OpCode.error), err: int }),
) as fc.Arbitrary<MultiResult>;

const op = <K extends keyof typeof OpCode>(...names: K[]) => fc.constantFrom(...names.map((n) => OpCode[n]));
const pair = (ops: fc.Arbitrary<number>, res: fc.Arbitrary<Response | undefined>) => fc.tuple(ops, res);

/** Any [opType, successful response] pair. */
export const responseArb: fc.Arbitrary<[number, Response | undefined]> = fc.oneof(
  pair(op('create', 'sync'), fc.record({ path: str })),
  pair(op('create2', 'createContainer', 'createTTL'), fc.record({ path: str, stat: statArb })),
  pair(op('exists', 'setData', 'setACL'), fc.record({ stat: statArb })),
  pair(op('getData', 'reconfig'), fc.record({ data: nullableBuf, stat: statArb })),
  pair(op('getACL'), fc.record({ acl: acls, stat: statArb })),
  pair(op('getChildren'), fc.record({ children: strs })),
  pair(op('getChildren2'), fc.record({ children: strs, stat: statArb })),
  pair(op('getEphemerals'), fc.record({ ephemerals: strs })),
  pair(op('getAllChildrenNumber'), fc.record({ totalNumber: int })),
  pair(op('addWatch'), fc.record({ err: int })),
  pair(op('whoAmI'), fc.record({ clientInfo: fc.array(fc.record({ authScheme: str, user: str }), { maxLength: 4 }) })),
  pair(op('sasl'), fc.record({ token: nullableBuf })),
  pair(op('multi', 'multiRead'), fc.record({ results: fc.array(multiResultArb, { maxLength: 5 }) })),
  pair(
    op('delete', 'ping', 'check', 'checkWatches', 'removeWatches', 'auth', 'setWatches', 'setWatches2', 'closeSession'),
    fc.constant(undefined),
  ),
);

export const xidArb = fc.integer();
export const zxidArb = long;
export const errArb = fc.integer();
export const eventArb = fc.record({ type: int, state: int, path: str });
export const connectRequestArb = fc.record({
  protocolVersion: int,
  lastZxidSeen: long,
  timeOut: int,
  sessionId: long,
  passwd: buf,
  readOnly: fc.boolean(),
});
export const connectResponseArb = fc.record({ protocolVersion: int, timeOut: int, sessionId: long, passwd: buf, readOnly: fc.boolean() });

/** Every op code a reply can be decoded for. */
export const replyOpTypes: number[] = [
  1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 100, 101, 102, 103, 104, 105, 106, 107, -11,
];
