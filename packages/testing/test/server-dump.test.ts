import { expect, test } from 'vitest';
import { parseServerDump } from '@tenure/testing';

// Answers captured from ZooKeeper 3.8.0.
const dump = `SessionTracker dump:
Session Sets (3)/(2):
0 expire at Mon Nov 30 12:22:34 UTC 2026:
1 expire at Mon Nov 30 12:22:36 UTC 2026:
\t0x100000623ab0001
1 expire at Mon Nov 30 12:22:37 UTC 2026:
\t0x100000623ab0002
ephemeral nodes dump:
Sessions with Ephemerals (1):
0x100000623ab0001:
\t/e1
\t/a/e0
Connections dump:
Connections Sets (2)/(2):
1 expire at Mon Nov 30 12:22:38 UTC 2026:
\tip: /127.0.0.1:43236 sessionId: 0x100000623ab0001
`;
const wchc = `0x100000623ab0002
\t/p
\t/q

`;

test('parses sessions, ephemerals and watched paths', () => {
  const d = parseServerDump(dump, wchc);
  expect(d.sessions).toEqual([
    { sessionId: 0x100000623ab0001n, ephemerals: ['/a/e0', '/e1'], watchedPaths: [], watches: 0 },
    { sessionId: 0x100000623ab0002n, ephemerals: [], watchedPaths: ['/p', '/q'], watches: 2 },
  ]);
  expect(d.totalWatches).toBe(2);
});

test('an idle server dumps no sessions', () => {
  const d = parseServerDump(
    'SessionTracker dump:\nSession Sets (0)/(0):\nephemeral nodes dump:\nSessions with Ephemerals (0):\nConnections dump:\n',
    '\n',
  );
  expect(d.sessions).toEqual([]);
  expect(d.totalWatches).toBe(0);
});
