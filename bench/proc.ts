/**
 * CPU time and memory from Linux's /proc, for the benchmarks' per-request figures. Each reader gives undefined
 * where /proc is missing or the process is gone, so that a benchmark still prints its rates elsewhere.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Clock ticks per second of /proc's counters (USER_HZ; 100 on every common Linux build). */
const HZ = 100;

/** CPU time in ms, user and system (kernel: for the service and PostgreSQL mostly socket I/O). */
export interface CpuTime {
  user: number;
  sys: number;
}

interface Stat {
  ppid: number;
  /** Clock ticks, user and system, of the process (or thread) itself and of the exited children it has reaped. */
  user: number;
  sys: number;
  childUser: number;
  childSys: number;
}

/** A `/proc/.../stat` file: the process's own, or one of its threads' (`<pid>/task/<tid>`). */
function readStat(entry: string): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${entry}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // the command name (field 2) may hold spaces: fields after its closing parenthesis, state(0) ppid(1) ... utime(11)
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(fields[1]), user: Number(fields[11]), sys: Number(fields[12]), childUser: Number(fields[13]), childSys: Number(fields[14]) };
}

const ms = (ticks: number) => (ticks * 1000) / HZ;

/** The CPU time of these processes, summed; undefined when one of them is gone. */
export function processesCpu(pids: readonly number[]): CpuTime | undefined {
  const total = { user: 0, sys: 0 };
  for (const pid of pids) {
    const stat = readStat(String(pid));
    if (!stat) return undefined;
    total.user += ms(stat.user);
    total.sys += ms(stat.sys);
  }
  return total;
}

/** The CPU time of one thread of this process (its main thread: `process.pid`). */
export function ownThreadCpu(tid: number): CpuTime | undefined {
  const stat = readStat(`self/task/${tid}`);
  return stat && { user: ms(stat.user), sys: ms(stat.sys) };
}

/** Every process now, by pid (its stat: the parent and CPU time). */
function allProcesses(): Map<number, Stat> {
  const all = new Map<number, Stat>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(entry);
    if (stat) all.set(Number(entry), stat);
  }
  return all;
}

/** `pid` and every process below it (a service's HTTP workers); just `pid` where /proc is missing. */
export function processTree(pid: number): number[] {
  let all: Map<number, Stat>;
  try {
    all = allProcesses();
  } catch {
    return [pid];
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) for (const [child, stat] of all) if (stat.ppid === tree[i]) tree.push(child);
  return tree;
}

/**
 * The CPU time of a PostgreSQL server: the postmaster, its exited children (reaped into its child counters,
 * so that a backend ending between two readings still counts) and its live children.
 */
export function postgresCpuTime(postmaster: number): CpuTime | undefined {
  const main = readStat(String(postmaster));
  if (!main) return undefined;
  let user = main.user + main.childUser;
  let sys = main.sys + main.childSys;
  try {
    for (const stat of allProcesses().values()) {
      if (stat.ppid !== postmaster) continue;
      user += stat.user;
      sys += stat.sys;
    }
  } catch {
    return undefined;
  }
  return { user: ms(user), sys: ms(sys) };
}

/** The whole machine's busy and total CPU time since boot, ms over all cores (/proc/stat's first line). */
export function machineCpu(): { busy: number; total: number } | undefined {
  let line: string;
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  } catch {
    return undefined;
  }
  // user nice system idle iowait irq softirq steal (guest time is counted in user already)
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return { busy: ms(busy), total: ms(busy + idle + iowait) };
}

/** A process's resident memory now and at its peak, MiB. */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}

/**
 * Established TCP connections on `port` held by each of `pids` (Linux: the sockets of /proc/<pid>/fd found in
 * /proc/net/tcp and tcp6); undefined where /proc is missing.
 */
export function connectionsPerProcess(pids: number[], port: number): Map<number, number> | undefined {
  try {
    const onPort = new Set<string>();
    const portHex = port.toString(16).toUpperCase().padStart(4, '0');
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      let text: string;
      try {
        text = readFileSync(table, 'utf8');
      } catch {
        continue;
      }
      for (const line of text.split('\n').slice(1)) {
        // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
        const fields = line.trim().split(/\s+/);
        if (fields.length > 9 && fields[1]!.endsWith(`:${portHex}`) && fields[3] === '01') onPort.add(fields[9]!);
      }
    }
    const counts = new Map<number, number>();
    for (const pid of pids) {
      let n = 0;
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        try {
          const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
          if (match && onPort.has(match[1]!)) n++;
        } catch {
          // closed meanwhile
        }
      }
      counts.set(pid, n);
    }
    return counts;
  } catch {
    return undefined;
  }
}
