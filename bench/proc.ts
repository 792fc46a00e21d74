/**
 * CPU time, memory and connections from Linux's /proc, for the benchmarks' figures. Each reader gives
 * undefined where /proc is missing or the process is gone, so that a benchmark still prints its rates.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** CPU time in ms, user and system (kernel: for the service and PostgreSQL mostly socket I/O). */
export type CpuTime = { user: number; sys: number };

/** Clock ticks per second of /proc's counters (USER_HZ; 100 on every common Linux build). */
const ms = (ticks: number) => (ticks * 1000) / 100;

const read = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

type Stat = { ppid: number; user: number; sys: number; childUser: number; childSys: number };

/** A `/proc/.../stat` file (a process's, or a thread's: `<pid>/task/<tid>`): the parent, and CPU ms of itself and of its reaped children. */
function readStat(entry: string): Stat | undefined {
  const text = read(`/proc/${entry}/stat`);
  if (text === undefined) return undefined;
  // the command name (field 2) may hold spaces: fields after its closing parenthesis, state(0) ppid(1) ... utime(11)
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ').map(Number);
  return { ppid: fields[1]!, user: ms(fields[11]!), sys: ms(fields[12]!), childUser: ms(fields[13]!), childSys: ms(fields[14]!) };
}

/** The CPU time of these processes, summed; undefined when one of them is gone. */
export function processesCpu(pids: readonly number[]): CpuTime | undefined {
  const stats = pids.map((pid) => readStat(String(pid)));
  if (stats.some((stat) => stat === undefined)) return undefined;
  return { user: stats.reduce((n, stat) => n + stat!.user, 0), sys: stats.reduce((n, stat) => n + stat!.sys, 0) };
}

/** The CPU time of one thread of this process (its main thread: `process.pid`). */
export function ownThreadCpu(tid: number): CpuTime | undefined {
  return readStat(`self/task/${tid}`);
}

/** Every process now: its pid and stat. */
function allProcesses(): Array<[number, Stat]> {
  return readdirSync('/proc').flatMap((entry) => {
    const stat = /^\d+$/.test(entry) ? readStat(entry) : undefined;
    return stat ? [[Number(entry), stat] as [number, Stat]] : [];
  });
}

/** `pid` and every process below it (a service's HTTP workers); just `pid` where /proc is missing. */
export function processTree(pid: number): number[] {
  let all: ReturnType<typeof allProcesses>;
  try {
    all = allProcesses();
  } catch {
    return [pid];
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) for (const [child, stat] of all) if (stat.ppid === tree[i]) tree.push(child);
  return tree;
}

/** PostgreSQL's CPU time: the postmaster, its live children and its exited ones (reaped into its counters: a backend ending between readings counts). */
export function postgresCpuTime(postmaster: number): CpuTime | undefined {
  const main = readStat(String(postmaster));
  if (!main) return undefined;
  const children = allProcesses().filter(([, stat]) => stat.ppid === postmaster);
  const sum = (of: (stat: Stat) => number) => children.reduce((n, [, stat]) => n + of(stat), 0);
  return { user: main.user + main.childUser + sum((s) => s.user), sys: main.sys + main.childSys + sum((s) => s.sys) };
}

/** The whole machine's busy and total CPU time since boot, ms over all cores (/proc/stat's first line). */
export function machineCpu(): { busy: number; total: number } | undefined {
  const line = read('/proc/stat')?.split('\n')[0];
  if (line === undefined) return undefined;
  // user nice system idle iowait irq softirq steal (guest time is counted in user already)
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return { busy: ms(busy), total: ms(busy + idle + iowait) };
}

/** A process's resident memory now and at its peak, MiB. */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } | undefined {
  const status = read(`/proc/${pid}/status`);
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status ?? '')?.[1] ?? 0);
  return status === undefined ? undefined : { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}

/** Established TCP connections on `port` held by each of `pids` (their /proc/<pid>/fd sockets found in /proc/net/tcp and tcp6); undefined without /proc. */
export function connectionsPerProcess(pids: number[], port: number): Map<number, number> | undefined {
  const portHex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const onPort = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of read(table)?.split('\n').slice(1) ?? []) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields.length > 9 && fields[1]!.endsWith(portHex) && fields[3] === '01') onPort.add(fields[9]!);
    }
  }
  try {
    return new Map(
      pids.map((pid) => {
        const sockets = readdirSync(`/proc/${pid}/fd`).map((fd) => {
          try {
            return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
          } catch {
            return undefined; // closed meanwhile
          }
        });
        return [pid, sockets.filter((inode) => inode !== undefined && onPort.has(inode)).length];
      }),
    );
  } catch {
    return undefined;
  }
}

/**
 * How much CPU other work took while a benchmark measured, so that a disturbed run can be told from a slow
 * one (the load average cannot tell: the benchmark's own PostgreSQL backends count in it). Busy time of the
 * whole machine, minus this process, minus the benchmark's PostgreSQL (`postmasterPid`: an embedded one), is
 * the others' share. Starts measuring; the returned function ends it, answering the average number of cores
 * other work kept busy. Undefined where /proc is missing.
 */
export function startCpuShare(postmasterPid: number | undefined): (() => { otherCores: number }) | undefined {
  const sample = () => {
    const own = process.cpuUsage();
    const machine = machineCpu();
    const postgres = postmasterPid === undefined ? undefined : postgresCpuTime(postmasterPid);
    return machine && { at: performance.now(), busy: machine.busy, own: (own.user + own.system) / 1000, postgres: postgres && postgres.user + postgres.sys };
  };
  const first = sample();
  if (!first) return undefined;
  return () => {
    const last = sample()!; // /proc was there at the start
    const postgres = first.postgres !== undefined && last.postgres !== undefined ? last.postgres - first.postgres : 0;
    const others = last.busy - first.busy - (last.own - first.own) - postgres;
    return { otherCores: Math.max(0, others) / (last.at - first.at) };
  };
}
