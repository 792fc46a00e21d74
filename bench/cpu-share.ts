/**
 * How much CPU other work took while a benchmark measured (Linux only: /proc), so that a disturbed run can
 * be told from a slow one. The load average cannot tell: the benchmark's own PostgreSQL backends count in it.
 * Busy time of the whole machine, minus this process (servers and autocannon's worker), minus the
 * benchmark's PostgreSQL (the postmaster of `postmasterPidFile` and its children), is the others' share.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's counters (USER_HZ; 100 on every common Linux build). */
const HZ = 100;

interface Sample {
  at: number;
  busySeconds: number;
  ownSeconds: number;
  postgresSeconds: number | undefined;
}

function machineBusySeconds(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal ...
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return (user + nice + system + irq + softirq + steal) / HZ;
}

interface ProcessStat {
  ppid: number;
  /** Clock ticks, user and system, of the process itself and of its exited children it has reaped. */
  user: number;
  sys: number;
  childUser: number;
  childSys: number;
}

function processStat(pid: number): ProcessStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) may hold spaces: fields after its closing parenthesis
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const [utime, stime, cutime, cstime] = [fields[11], fields[12], fields[13], fields[14]].map(Number) as [number, number, number, number];
    return { ppid: Number(fields[1]), user: utime, sys: stime, childUser: cutime, childSys: cstime };
  } catch {
    return undefined;
  }
}

/**
 * CPU time in ms, user and system, of a PostgreSQL server: the postmaster, its exited children (reaped into
 * its child counters, so that a backend ending between two readings still counts) and its live children.
 * Undefined when the postmaster is gone or /proc is missing.
 */
export function postgresCpuTime(postmaster: number): { user: number; sys: number } | undefined {
  const main = processStat(postmaster);
  if (!main) return undefined;
  let user = main.user + main.childUser;
  let sys = main.sys + main.childSys;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = processStat(Number(entry));
    if (stat?.ppid !== postmaster) continue;
    user += stat.user;
    sys += stat.sys;
  }
  return { user: (user * 1000) / HZ, sys: (sys * 1000) / HZ };
}

function postgresSeconds(postmasterPidFile: string | undefined): number | undefined {
  if (!postmasterPidFile) return undefined;
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(postmasterPidFile, 'utf8').split('\n')[0]);
  } catch {
    return undefined;
  }
  const time = postgresCpuTime(postmaster);
  return time && (time.user + time.sys) / 1000;
}

export interface CpuShare {
  /** Average number of cores other work kept busy. */
  otherCores: number;
  /** Whether the benchmark's PostgreSQL could be told apart (an embedded one); if not, it counts as other work. */
  postgresKnown: boolean;
}

/** Starts measuring; the returned function ends it. Undefined where /proc is missing. */
export function startCpuShare(postmasterPidFile: string | undefined): (() => CpuShare) | undefined {
  const sample = (): Sample => {
    const own = process.cpuUsage();
    return {
      at: performance.now(),
      busySeconds: machineBusySeconds(),
      ownSeconds: (own.user + own.system) / 1e6,
      postgresSeconds: postgresSeconds(postmasterPidFile),
    };
  };
  let first: Sample;
  try {
    first = sample();
  } catch {
    return undefined;
  }
  return () => {
    const last = sample();
    const elapsed = (last.at - first.at) / 1000;
    const postgresKnown = first.postgresSeconds !== undefined && last.postgresSeconds !== undefined;
    const postgres = postgresKnown ? last.postgresSeconds! - first.postgresSeconds! : 0;
    const others = last.busySeconds - first.busySeconds - (last.ownSeconds - first.ownSeconds) - postgres;
    return { otherCores: Math.max(0, others) / elapsed, postgresKnown };
  };
}
