/** The /zookeeper/config parser, the reconfig request builder and the connect-string host list. */
import { describe, expect, test } from 'vitest';
import { InvalidArgumentError, OpCode } from '@tenure/protocol';
import { clientHostsOf, formatMember, parseEnsembleConfig, parseMemberLine } from '../src/ensemble-config.js';
import { reconfigRequest } from '../src/ensemble-ops.js';
import { parseHostList } from '../src/host-list.js';

describe('parseEnsembleConfig', () => {
  test('members, roles, client addresses and the hex version, as ZooKeeper 3.8 writes them', () => {
    const raw = [
      'server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181',
      'server.3=zk3.example:2889:3889:observer;zk3.example:2182',
      'server.2=[::1]:2890:3890:participant;[::1]:2183',
      'version=10000000a',
    ].join('\n');
    const config = parseEnsembleConfig(Buffer.from(raw));
    expect(config.raw).toBe(raw);
    expect(config.version).toBe('10000000a');
    expect(config.members).toEqual([
      { id: '1', host: '10.0.0.1', quorumPort: 2888, electionPort: 3888, role: 'participant', clientHost: '0.0.0.0', clientPort: 2181 },
      { id: '2', host: '::1', quorumPort: 2890, electionPort: 3890, role: 'participant', clientHost: '::1', clientPort: 2183 },
      { id: '3', host: 'zk3.example', quorumPort: 2889, electionPort: 3889, role: 'observer', clientHost: 'zk3.example', clientPort: 2182 },
    ]);
    // A wildcard client address stands for the member's quorum host (Curator's rule).
    expect(clientHostsOf(config)).toEqual(['10.0.0.1:2181', '[::1]:2183', 'zk3.example:2182']);
  });

  test('optional parts: no role is participant, a bare client port is every address, no client part is none', () => {
    expect(parseMemberLine('server.7=h:1:2')).toEqual({ id: '7', host: 'h', quorumPort: 1, electionPort: 2, role: 'participant' });
    expect(parseMemberLine('server.7=h:1:2;2181')).toMatchObject({ clientHost: '0.0.0.0', clientPort: 2181 });
    const staticEnsemble = parseEnsembleConfig('server.1=h:1:2\nserver.2=g:1:2\nversion=0');
    expect(clientHostsOf(staticEnsemble)).toEqual([]);
  });

  test('a standalone server config is empty', () => {
    expect(parseEnsembleConfig('')).toEqual({ members: [], version: '', raw: '' });
  });

  test('malformed lines are InvalidArgumentError', () => {
    for (const bad of [
      'server.x=h:1:2',
      'server.1=h:1',
      'server.1=h:1:2:leader',
      'server.1=h:0:2',
      'server.1=[::1:1:2',
      'server.1=h:1:2;a:b:c',
    ]) {
      expect(() => parseMemberLine(bad), bad).toThrow(InvalidArgumentError);
    }
  });

  test('formatMember writes back a line that parses to the same member', () => {
    for (const line of [
      'server.4=10.0.0.4:2888:3888:participant;10.0.0.4:2181',
      'server.5=[::1]:1:2:observer;[::1]:3',
      'server.6=h:1:2:participant',
    ]) {
      expect(formatMember(parseMemberLine(line))).toBe(line);
    }
  });
});

describe('reconfigRequest', () => {
  test('incremental: joining lines and leaving ids, comma-separated; fromConfig hex to a long', () => {
    expect(
      reconfigRequest({
        joining: ['server.4=h4:1:2:participant;h4:2181', { id: '5', host: 'h5', quorumPort: 1, electionPort: 2, role: 'observer' }],
        leaving: ['1', 2],
        fromConfig: '10000000a',
      }),
    ).toEqual({
      type: OpCode.reconfig,
      joiningServers: 'server.4=h4:1:2:participant;h4:2181,server.5=h5:1:2:observer',
      leavingServers: '1,2',
      newMembers: null,
      curConfigId: 0x10000000an,
    });
  });

  test('non-incremental: members; no fromConfig is -1', () => {
    expect(reconfigRequest({ members: ['server.1=h:1:2'] })).toMatchObject({
      joiningServers: null,
      leavingServers: null,
      newMembers: 'server.1=h:1:2',
      curConfigId: -1n,
    });
  });

  test('refuses mixing, nothing, bad ids and bad versions', () => {
    expect(() => reconfigRequest({ members: ['server.1=h:1:2'], leaving: ['2'] })).toThrow(InvalidArgumentError);
    expect(() => reconfigRequest({})).toThrow(InvalidArgumentError);
    expect(() => reconfigRequest({ leaving: ['one'] })).toThrow(InvalidArgumentError);
    expect(() => reconfigRequest({ leaving: ['1'], fromConfig: 'xyz' })).toThrow(InvalidArgumentError);
    expect(() => reconfigRequest({ joining: ['a,b'] })).toThrow(InvalidArgumentError);
  });
});

describe('parseHostList (updateServerList)', () => {
  test('default port, IPv6 brackets, the chroot dropped', () => {
    expect(parseHostList('a,b:2182,[::1]:3/app').hosts).toEqual(['a:2181', 'b:2182', '[::1]:3']);
    expect(() => parseHostList('/app')).toThrow(InvalidArgumentError);
    expect(() => parseHostList('a:99999')).toThrow(InvalidArgumentError);
  });
});
