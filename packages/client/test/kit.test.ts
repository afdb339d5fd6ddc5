/** The recipe kit's pieces on their own: lifecycle rules, the pass runner, retry pacing on a ManualClock, safe emit, triage. */
import { describe, expect, it } from 'vitest';
import { EventEmitter } from 'eventemitter3';
import { ManualClock, settle } from '@tenure/testing';
import {
  ClosedError,
  ConnectionLossError,
  IllegalStateError,
  NoAuthError,
  NoNodeError,
  PassRunner,
  RecipeLifecycle,
  RetryPacer,
  RetryPolicies,
  SessionExpiredError,
  backoffMs,
  safeEmitter,
  triageFailure,
} from '../src/index.js';

describe('RecipeLifecycle', () => {
  it("goes 'latent' → 'started' → 'closed'; a second start and a start after close reject with IllegalStateError", async () => {
    const life = new RecipeLifecycle('Thing /x');
    let started = 0;
    expect(life.state).toBe('latent');
    await life.start(() => void started++);
    expect(life.state).toBe('started');
    const again = life.start(() => void started++);
    await expect(again).rejects.toBeInstanceOf(IllegalStateError);
    await expect(again).rejects.toMatchObject({ code: 'ILLEGAL_STATE' });
    let closes = 0;
    const first = life.close((wasStarted) => {
      expect(wasStarted).toBe(true);
      closes++;
    });
    expect(life.state).toBe('closed');
    expect(life.close(() => void closes++)).toBe(first);
    await first;
    expect(closes).toBe(1);
    await expect(life.start(() => void started++)).rejects.toBeInstanceOf(IllegalStateError);
    expect(started).toBe(1);
  });

  it('close before start runs the release with wasStarted false; requireStarted names the misuse', async () => {
    const life = new RecipeLifecycle('Thing /y');
    expect(() => life.requireStarted('read')).toThrow(/read\(\) before start\(\)/);
    let was: boolean | undefined;
    await life.close((w) => void (was = w));
    expect(was).toBe(false);
    expect(() => life.requireStarted('read')).toThrow(IllegalStateError);
  });

  it("a start whose precondition throws rejects with that and stays 'latent'", async () => {
    const life = new RecipeLifecycle('Thing /p');
    let ran = false;
    await expect(
      life.start(
        () => void (ran = true),
        () => {
          throw new ClosedError('client');
        },
      ),
    ).rejects.toBeInstanceOf(ClosedError);
    expect(life.state).toBe('latent');
    expect(ran).toBe(false);
  });

  it("a start whose own work throws rejects with that error (and stays 'started' for close to release)", async () => {
    const life = new RecipeLifecycle('Thing /z');
    await expect(
      life.start(() => {
        throw new ClosedError('client');
      }),
    ).rejects.toBeInstanceOf(ClosedError);
    expect(life.state).toBe('started');
  });
});

describe('PassRunner', () => {
  it('runs one pass at a time and once more when asked meanwhile, however often', async () => {
    const clock = new ManualClock();
    let passes = 0;
    let release!: () => void;
    let idles = 0;
    const runner = new PassRunner(
      clock,
      async () => {
        passes++;
        if (passes === 1) await new Promise<void>((r) => (release = r));
      },
      () => {},
      () => idles++,
    );
    expect(runner.run()).toBe(true);
    expect(runner.run()).toBe(false);
    expect(runner.run()).toBe(false);
    await settle();
    expect(passes).toBe(1);
    release();
    await runner.whenIdle();
    expect(passes).toBe(2);
    expect(idles).toBe(1);
    expect(runner.busy).toBe(false);
  });

  it('a pass that asks for itself is queued, not doubled; a failed pass goes to `failed` and a queued one still runs', async () => {
    const clock = new ManualClock();
    const failures: unknown[] = [];
    let passes = 0;
    const runner: PassRunner = new PassRunner(
      clock,
      async () => {
        passes++;
        if (passes === 1) {
          runner.run();
          throw new ConnectionLossError('/p');
        }
      },
      (err) => failures.push(err),
    );
    runner.run();
    await runner.whenIdle();
    expect(passes).toBe(2);
    expect(failures).toHaveLength(1);
  });

  it('runIn keeps the earliest time asked for, on the clock; stop clears the timer', async () => {
    const clock = new ManualClock();
    let passes = 0;
    const runner = new PassRunner(
      clock,
      async () => void passes++,
      () => {},
    );
    runner.runIn(500);
    runner.runIn(100);
    runner.runIn(300);
    expect(clock.pending).toBe(1);
    await clock.advance(99);
    expect(passes).toBe(0);
    await clock.advance(1);
    await runner.whenIdle();
    expect(passes).toBe(1);
    runner.runIn(100);
    runner.stop();
    expect(clock.pending).toBe(0);
    expect(runner.run()).toBe(false);
  });
});

describe('RetryPacer', () => {
  it("waits the policy's backoffMs for each attempt on the injected clock, and starts over after a success", async () => {
    const clock = new ManualClock();
    const policy = RetryPolicies.nTimes(2, 250);
    const pacer = new RetryPacer({ clock, retryPolicy: RetryPolicies.forever(10) }, policy);
    let retries = 0;
    expect(pacer.schedule(() => retries++)).toBe(backoffMs(policy, 0));
    expect(pacer.schedule(() => retries++)).toBe(250); // replaces the pending one
    expect(pacer.pending).toBe(1);
    await clock.advance(249);
    expect(retries).toBe(0);
    await clock.advance(1);
    expect(retries).toBe(1);
    expect(pacer.attempts).toBe(2);
    pacer.succeeded();
    expect(pacer.attempts).toBe(0);
  });

  it("defaults to the owner's retry policy; `alongside` keeps other retries; cancel drops them all", async () => {
    const clock = new ManualClock();
    const pacer = new RetryPacer({ clock, retryPolicy: RetryPolicies.forever(40) });
    let retries = 0;
    pacer.schedule(() => retries++, { alongside: true });
    pacer.schedule(() => retries++, { alongside: true });
    expect(pacer.pending).toBe(2);
    await clock.advance(40);
    expect(retries).toBe(2);
    pacer.schedule(() => retries++);
    pacer.cancel();
    expect(clock.pending).toBe(0);
  });

  it('pause() sleeps the next pause on the clock and ends early, without rejecting, when its signal aborts', async () => {
    const clock = new ManualClock();
    const pacer = new RetryPacer({ clock, retryPolicy: RetryPolicies.forever(1000) });
    let done = false;
    const p = pacer.pause().then(() => (done = true));
    await clock.advance(999);
    expect(done).toBe(false);
    await clock.advance(1);
    await p;
    const ac = new AbortController();
    const q = pacer.pause(ac.signal);
    ac.abort();
    await expect(q).resolves.toBeUndefined();
    expect(clock.pending).toBe(0);
  });
});

describe('safeEmitter', () => {
  it("turns a listener's exception into an `error` event, and drops one thrown by an `error` listener", () => {
    const emitter = new EventEmitter<{ changed(n: number): void; error(e: Error): void }>();
    const emit = safeEmitter<{ changed(n: number): void; error(e: Error): void }>(emitter);
    const errors: Error[] = [];
    emitter.on('changed', () => {
      throw new Error('listener bug');
    });
    emitter.on('error', (e) => {
      errors.push(e);
      throw new Error('error listener bug');
    });
    expect(() => emit('changed', 1)).not.toThrow();
    expect(errors.map((e) => e.message)).toEqual(['listener bug']);
  });
});

describe('triageFailure', () => {
  it('one verdict per failure: closed, NoAuth stops, session LOST waits for the new session, connection trouble is transient', () => {
    expect(triageFailure(new ClosedError('client'))).toBe('closed');
    const closed = new AbortController();
    closed.abort();
    expect(triageFailure(new NoAuthError('/a'), closed.signal)).toBe('closed');
    expect(triageFailure(new NoAuthError('/a'))).toBe('stop');
    expect(triageFailure(new SessionExpiredError('/a'))).toBe('session');
    expect(triageFailure(new ConnectionLossError('/a'))).toBe('transient');
    expect(triageFailure(new NoNodeError('/a'))).toBe('report');
    expect(triageFailure(new Error('x'))).toBe('report');
  });
});
