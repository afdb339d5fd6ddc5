/**
 * What the benches read about another process from /proc (Linux): its CPU time, its RSS, its system
 * calls, and the pid of a JVM found by an argument of its command line.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ: 100 on every Linux build that matters). */
const TICKS_PER_SECOND = 100;

/** User and system CPU time of a process and all its threads so far, in seconds. */
export function cpuTimes(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields from the closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat, i.e. 12 and 13 after the state (field 3).
  return { user: Number(fields[11]) / TICKS_PER_SECOND, system: Number(fields[12]) / TICKS_PER_SECOND };
}

/** User + system CPU time of a process and all its threads so far, in seconds. */
export function cpuSeconds(pid: number): number {
  const t = cpuTimes(pid);
  return t.user + t.system;
}

/** VmRSS of a process, kB. */
export function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]);
}

/** Read and write system calls of a process so far (syscr, syscw of /proc/<pid>/io: a socket's reads and writes count). */
export function syscalls(pid: number): { reads: number; writes: number } {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`${name}: (\\d+)`).exec(io)?.[1] ?? NaN);
  return { reads: field('syscr'), writes: field('syscw') };
}

/** The pid of the JVM whose command line holds `needle` (TestingServer runs it under a `sh` watchdog). */
export function javaPidWithArgument(needle: string): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv.includes(needle) && readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'java') return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no java process with argument ${needle}`);
}
