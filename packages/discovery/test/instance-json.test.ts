/** Curator's JSON (the probes in docs/curator-layouts.md §5.3), UriSpec (§5.4) and the instance defaults. */
import { describe, expect, it } from 'vitest';
import { isIPv4 } from 'node:net';
import {
  buildUri,
  firstLocalIPv4,
  formatUriSpec,
  InvalidInstanceError,
  JsonInstanceSerializer,
  newServiceInstance,
  parseUriSpec,
  springCloudPayload,
} from '../src/index.js';
import { InvalidArgumentError } from '@tenure/client';

// Curator 5.4.0's JsonInstanceSerializer in compatible mode, byte for byte (Jackson 2.14 probe).
const CURATOR_PROBE =
  '{"name":"test","id":"abc-id","address":"10.0.0.1","port":1234,"sslPort":null,"payload":null,"registrationTimeUTC":1325129459728,"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://foo.com:","variable":false},{"value":"port","variable":true},{"value":"/x/","variable":false},{"value":"id","variable":true}]}}';

// What a Spring Cloud Zookeeper service writes (compatible mode, ZookeeperInstance payload).
const SPRING =
  '{"name":"app","id":"2f1c7a43-88b1-4c2e-9a57-1d6f0e4b3c21","address":"10.1.2.3","port":8080,"sslPort":null,"payload":{"@class":"org.springframework.cloud.zookeeper.discovery.ZookeeperInstance","id":"application-1","name":"app","metadata":{"instance_status":"UP","zone":"eu-1"}},"registrationTimeUTC":1700000000123,"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://","variable":false},{"value":"address","variable":true},{"value":":","variable":false},{"value":"port","variable":true}]}}';

const json = new JsonInstanceSerializer();

describe('JsonInstanceSerializer', () => {
  it("writes Curator's compatible JSON byte for byte, and reads it back", () => {
    const instance = newServiceInstance({
      name: 'test',
      id: 'abc-id',
      address: '10.0.0.1',
      port: 1234,
      registrationTimeUTC: 1325129459728,
      uriSpec: '{scheme}://foo.com:{port}/x/{id}',
    });
    expect(json.serialize(instance).toString()).toBe(CURATOR_PROBE);
    expect(json.deserialize(Buffer.from(CURATOR_PROBE))).toEqual({ ...instance, enabled: true });
  });

  it('non-compatible mode appends enabled; compatible mode writes it only when false, and a missing one reads as true', () => {
    const instance = json.deserialize(Buffer.from(CURATOR_PROBE));
    expect(new JsonInstanceSerializer({ compatible: false }).serialize(instance).toString()).toBe(
      CURATOR_PROBE.slice(0, -1) + ',"enabled":true}',
    );
    const disabled = { ...instance, enabled: false };
    expect(json.serialize(disabled).toString()).toBe(CURATOR_PROBE.slice(0, -1) + ',"enabled":false}');
    expect(json.deserialize(json.serialize(disabled)).enabled).toBe(false);
  });

  it('a Spring Cloud Zookeeper instance round-trips byte for byte, and springCloudPayload builds its payload', () => {
    const read = json.deserialize(Buffer.from(SPRING));
    expect(json.serialize(read).toString()).toBe(SPRING);
    expect(read.payload).toEqual(springCloudPayload({ id: 'application-1', name: 'app', metadata: { zone: 'eu-1' } }));
    const written = newServiceInstance({
      ...read,
      payload: springCloudPayload({ id: 'application-1', name: 'app', metadata: { zone: 'eu-1' } }),
    });
    expect(json.serialize(written).toString()).toBe(SPRING);
  });

  it('keeps unknown fields from newer writers, and takes Curator’s defaults for missing ones', () => {
    const newer = CURATOR_PROBE.slice(0, -1) + ',"weight":7,"zone":{"a":1}}';
    const read = json.deserialize(Buffer.from(newer));
    expect(read.unknownFields).toEqual({ weight: 7, zone: { a: 1 } });
    expect(json.serialize(read).toString()).toBe(newer);
    expect(json.deserialize(Buffer.from('{}'))).toEqual({
      name: '',
      id: '',
      address: null,
      port: null,
      sslPort: null,
      payload: null,
      registrationTimeUTC: 0,
      serviceType: 'DYNAMIC',
      uriSpec: null,
      enabled: true,
    });
  });

  it('payloads are any JSON value, Java type ids included', () => {
    for (const payload of ['hello', 7, true, 1.5, ['java.lang.Long', 42], { '@class': 'java.util.LinkedHashMap', k: 'v' }]) {
      const i = newServiceInstance({ name: 's', id: 'i', address: null, payload, registrationTimeUTC: 1 });
      expect(json.deserialize(json.serialize(i)).payload).toEqual(payload);
    }
  });

  it('refuses what Jackson refuses: lowercase serviceType, non-JSON, wrong types', () => {
    expect(() => json.deserialize(Buffer.from('{"serviceType":"dynamic"}'))).toThrow(InvalidInstanceError);
    expect(() => json.deserialize(Buffer.from('not json'))).toThrow(InvalidInstanceError);
    expect(() => json.deserialize(Buffer.from('[1]'))).toThrow(InvalidInstanceError);
    expect(() => json.deserialize(Buffer.from('{"port":"80x"}'))).toThrow(/port/);
  });
});

describe('instance defaults', () => {
  it("are Curator's builder's: a random UUID, the first non-loopback IPv4, now, DYNAMIC, enabled", () => {
    const before = Date.now();
    const i = newServiceInstance({ name: 'orders', port: 8080 });
    expect(i.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(i.address).toBe(firstLocalIPv4());
    if (i.address !== null) {
      expect(isIPv4(i.address)).toBe(true);
      expect(i.address.startsWith('127.')).toBe(false);
    }
    expect(i.registrationTimeUTC).toBeGreaterThanOrEqual(before);
    expect(i.serviceType).toBe('DYNAMIC');
    expect(i.enabled).toBe(true);
    expect(i.sslPort).toBeNull();
    expect(newServiceInstance({ name: 'orders' }).id).not.toBe(i.id);
  });

  it('refuses names and ids that are not node names, and bad ports and types', () => {
    expect(() => newServiceInstance({ name: 'a/b' })).toThrow(InvalidArgumentError);
    expect(() => newServiceInstance({ name: 'a', id: '' })).toThrow(InvalidArgumentError);
    expect(() => newServiceInstance({ name: 'a', port: -1 })).toThrow(InvalidArgumentError);
    expect(() => newServiceInstance({ name: 'a', serviceType: 'dynamic' as never })).toThrow(InvalidArgumentError);
  });
});

describe('UriSpec', () => {
  it('splits templates as Curator does and formats them back', () => {
    expect(parseUriSpec('{scheme}://foo.com:{ port }/x/{id}')).toEqual([
      { value: 'scheme', variable: true },
      { value: '://foo.com:', variable: false },
      { value: 'port', variable: true },
      { value: '/x/', variable: false },
      { value: 'id', variable: true },
    ]);
    expect(parseUriSpec('{a}{b}')).toEqual([
      { value: 'a', variable: true },
      { value: 'b', variable: true },
    ]);
    expect(formatUriSpec(parseUriSpec('{scheme}://foo.com:{port}/x/{id}'))).toBe('{scheme}://foo.com:{port}/x/{id}');
    expect(() => parseUriSpec('{a{b}}')).toThrow(/inside of a variable/);
    expect(() => parseUriSpec('a}')).toThrow(/must be preceded/);
    expect(() => parseUriSpec('{a')).toThrow(/not closed/);
  });

  it("buildUri fills Curator's standard variables (the §5.4 probe)", () => {
    const i = newServiceInstance({
      name: 'test',
      id: 'id2',
      address: 'h',
      port: 80,
      sslPort: 8443,
      registrationTimeUTC: 1,
      serviceType: 'DYNAMIC_SEQUENTIAL',
    });
    expect(buildUri(i, {}, '{scheme}://{address}:{ssl-port}/{name}/{id}/{registration-time-utc}/{service-type}/{[}x{]}/{nope}')).toBe(
      'https://h:8443/test/id2/1/dynamic_sequential/{x}/',
    );
    const plain = newServiceInstance({ name: 'orders', address: '10.0.0.7', port: 8080, uriSpec: '{scheme}://{address}:{port}/v1' });
    expect(buildUri(plain)).toBe('http://10.0.0.7:8080/v1');
    expect(buildUri(plain, { scheme: 'grpc' })).toBe('grpc://10.0.0.7:8080/v1');
    expect(buildUri({ ...plain, port: null })).toBe('http://10.0.0.7:/v1');
    expect(buildUri({ ...plain, uriSpec: null })).toBe('');
  });
});
