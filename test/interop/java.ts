/**
 * Compile and run Java programs against Debian's jars (libcurator-recipes-java, zookeeper), for
 * interop tests and benchmarks.
 *
 * - `javaToolchain()` finds java, javac and the jars, or says what to install (with CI=true a
 *   missing toolchain throws: a skipped interop suite in CI is a failure).
 * - `compileJava()` runs javac into a fresh temporary directory.
 * - `JavaProgram.start()` runs a main class with stdin for commands and stdout read line by line.
 *   Java runs under a small `sh` watchdog holding a pipe on fd 3: when this process goes away for
 *   any reason (even SIGKILL) the pipe closes and the watchdog kills the JVM. No orphan JVM survives.
 *
 * Debian's jars name their dependencies in their manifest Class-Path, so curator-recipes.jar
 * alone brings in curator-framework, curator-client, guava, zookeeper and zookeeper-jute.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';

/** Debian's jars: Curator's recipes (which pull in the framework, the client and ZooKeeper) and an slf4j binding. */
export const CURATOR_JARS = ['/usr/share/java/curator-recipes.jar', '/usr/share/java/slf4j-simple.jar'];
/** The plain ZooKeeper client (and an slf4j binding). */
export const ZOOKEEPER_JARS = ['/usr/share/java/zookeeper.jar', '/usr/share/java/slf4j-simple.jar'];

export interface JavaToolchain {
  java: string;
  javac: string;
}

export type JavaAvailability =
  { available: true; toolchain: JavaToolchain; reason?: undefined } | { available: false; reason: string; toolchain?: undefined };

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findTool(name: string, env: NodeJS.ProcessEnv): string | undefined {
  if (env.JAVA_HOME && executable(join(env.JAVA_HOME, 'bin', name))) return join(env.JAVA_HOME, 'bin', name);
  for (const dir of (env.PATH ?? '').split(delimiter)) if (dir && executable(join(dir, name))) return join(dir, name);
  return undefined;
}

/**
 * Java, javac and `jars`, or why not. With CI=true a missing piece throws, so that an interop
 * suite is never silently skipped in CI.
 */
export function javaToolchain(jars: readonly string[] = CURATOR_JARS, env: NodeJS.ProcessEnv = process.env): JavaAvailability {
  const java = findTool('java', env);
  const javac = findTool('javac', env);
  const missing = jars.filter((j) => !existsSync(j));
  let reason: string | undefined;
  if (!java || !javac) reason = 'java/javac not found (JAVA_HOME, PATH): apt-get install default-jdk-headless';
  else if (missing.length > 0) reason = `missing ${missing.join(', ')}: apt-get install libcurator-recipes-java libslf4j-java zookeeper`;
  if (reason === undefined) return { available: true, toolchain: { java: java!, javac: javac! } };
  if (env.CI === 'true' || env.CI === '1') throw new Error(`Java interop unavailable: ${reason}`);
  return { available: false, reason };
}

/** A directory of compiled classes, removed by dispose(). */
export interface CompiledJava extends Disposable {
  /** The class directory. */
  dir: string;
  /** The class path to run with: the class directory and the jars it was compiled against. */
  classpath: string;
  dispose(): void;
}

/** Compiles `sources` (paths of .java files) against `jars` into a new temporary directory. */
export async function compileJava(
  sources: readonly string[],
  jars: readonly string[] = CURATOR_JARS,
  toolchain?: JavaToolchain,
): Promise<CompiledJava> {
  const tools = toolchain ?? needToolchain(jars);
  const dir = mkdtempSync(join(tmpdir(), 'tenure-java-'));
  const cp = jars.join(':');
  const out: Buffer[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const p = spawn(
      tools.javac,
      ['-J-XX:TieredStopAtLevel=1', '-J-XX:+UseSerialGC', '-d', dir, '-cp', cp, '-nowarn', '-proc:none', '-encoding', 'UTF-8', ...sources],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    p.stdout.on('data', (b: Buffer) => out.push(b));
    p.stderr.on('data', (b: Buffer) => out.push(b));
    p.once('error', reject);
    p.once('exit', resolve);
  });
  if (code !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`javac failed (exit ${code}):\n${Buffer.concat(out).toString()}`);
  }
  const dispose = (): void => rmSync(dir, { recursive: true, force: true });
  return { dir, classpath: `${dir}:${cp}`, dispose, [Symbol.dispose]: dispose };
}

function needToolchain(jars: readonly string[]): JavaToolchain {
  const t = javaToolchain(jars);
  if (!t.available) throw new Error(`Java interop unavailable: ${t.reason}`);
  return t.toolchain;
}

export interface JavaProgramOptions {
  classpath: string;
  mainClass: string;
  args?: readonly string[];
  /**
   * JVM flags. Default: a quick start (C1 only, serial GC), right for short test programs;
   * benchmarks pass [] for the full JIT.
   */
  jvmFlags?: readonly string[];
  /** stderr goes to this file (default: a file in the class directory's parent temp dir). */
  logFile?: string;
  toolchain?: JavaToolchain;
}

export const QUICK_START_FLAGS = ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Xshare:auto', '-Xmx256m'];

// fd 3 is the watchdog pipe. Java gets our stdin (saved on fd 4: an asynchronous command's stdin
// would otherwise be /dev/null) and does not inherit fd 3.
const WATCHDOG = 'exec 4<&0; "$@" <&4 3<&- 4<&- & j=$!; exec 4<&-; { cat <&3 >/dev/null; kill -9 $j 2>/dev/null; } & wait $j';

const live = new Set<ChildProcess>();
let exitHook = false;
function installExitHook(): void {
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const c of live) (c.stdio[3] as Writable | null)?.destroy();
  });
}

/** A running Java program: send lines to its stdin, read its stdout line by line. */
export class JavaProgram implements AsyncDisposable {
  readonly exited: Promise<number | null>;
  /** Every stdout line so far. */
  readonly lines: string[] = [];
  private readonly child: ChildProcess;
  private readonly waiters = new Set<{ test: (line: string) => boolean; resolve: (line: string) => void }>();
  private exitCode: number | null | undefined;
  private readonly logFile: string;
  /** A temporary directory of ours holding the log, removed at stop(). */
  private readonly logDir: string | undefined;

  private constructor(options: JavaProgramOptions) {
    installExitHook();
    const tools = options.toolchain ?? needToolchain([]);
    this.logDir = options.logFile === undefined ? mkdtempSync(join(tmpdir(), 'tenure-java-log-')) : undefined;
    this.logFile = options.logFile ?? join(this.logDir!, 'stderr.log');
    const log = openSync(this.logFile, 'a');
    try {
      const flags = options.jvmFlags ?? QUICK_START_FLAGS;
      this.child = spawn(
        'sh',
        [
          '-c',
          WATCHDOG,
          'tenure-java',
          tools.java,
          ...flags,
          '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
          '-cp',
          options.classpath,
          options.mainClass,
          ...(options.args ?? []),
        ],
        { stdio: ['pipe', 'pipe', log, 'pipe'] },
      );
    } finally {
      closeSync(log);
    }
    live.add(this.child);
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      this.lines.push(line);
      for (const w of [...this.waiters]) {
        if (w.test(line)) {
          this.waiters.delete(w);
          w.resolve(line);
        }
      }
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code) => {
        this.exitCode = code;
        live.delete(this.child);
        (this.child.stdio[3] as Writable | null)?.destroy();
        resolve(code);
      });
      this.child.once('error', () => {
        this.exitCode = null;
        live.delete(this.child);
        resolve(null);
      });
    });
  }

  /** Starts the program; with `ready`, resolves once it prints a line matching it. */
  static async start(options: JavaProgramOptions, ready?: RegExp, timeoutMs = 30_000): Promise<JavaProgram> {
    const p = new JavaProgram(options);
    if (ready) {
      try {
        await p.waitFor(ready, timeoutMs);
      } catch (err) {
        await p.stop();
        throw err;
      }
    }
    return p;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /** Writes one line to the program's stdin. */
  send(line: string): void {
    this.child.stdin!.write(`${line}\n`);
  }

  /**
   * The first stdout line from now on matching `pattern` (lines already read are not searched).
   * Rejects after `timeoutMs`, or when the program exits, with its stderr's tail.
   */
  waitFor(pattern: RegExp | ((line: string) => boolean), timeoutMs = 30_000): Promise<string> {
    const test = typeof pattern === 'function' ? pattern : (l: string) => pattern.test(l);
    return new Promise((resolve, reject) => {
      const entry = {
        test,
        resolve: (line: string) => {
          clearTimeout(timer);
          resolve(line);
        },
      };
      const fail = (why: string): void => {
        if (!this.waiters.delete(entry)) return;
        reject(
          new Error(
            `${why} waiting for ${String(pattern)}; stdout tail:\n${this.lines.slice(-10).join('\n')}\nstderr tail:\n${this.stderrTail()}`,
          ),
        );
      };
      const timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs);
      this.waiters.add(entry);
      void this.exited.then((code) => {
        clearTimeout(timer);
        fail(`the program exited (${code})`);
      });
    });
  }

  /** Sends a command and waits for the answer line. */
  async ask(line: string, answer: RegExp, timeoutMs = 30_000): Promise<string> {
    const waiting = this.waitFor((l) => answer.test(l) || /^error /.test(l), timeoutMs);
    this.send(line);
    const got = await waiting;
    if (/^error /.test(got) && !answer.test(got)) throw new Error(`java answered ${got} to ${line}`);
    return got;
  }

  stderrTail(lines = 30): string {
    try {
      return readFileSync(this.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  /** Closes stdin (the programs here exit on EOF); kills the JVM if it is still there after `graceMs`. */
  async stop(graceMs = 3000): Promise<void> {
    if (this.running) {
      this.child.stdin!.end();
      const timer = setTimeout(() => (this.child.stdio[3] as Writable | null)?.destroy(), graceMs);
      try {
        await this.exited;
      } finally {
        clearTimeout(timer);
      }
    }
    if (this.logDir !== undefined) rmSync(this.logDir, { recursive: true, force: true });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }
}
