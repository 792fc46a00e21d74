/**
 * How much CPU other work took while a benchmark measured (Linux only: /proc), so that a disturbed run can
 * be told from a slow one. The load average cannot tell: the benchmark's own PostgreSQL backends count in it.
 * Busy time of the whole machine, minus this process (servers and autocannon's worker), minus the
 * benchmark's PostgreSQL (the postmaster of `postmasterPidFile` and its children), is the others' share.
 */
import { readFileSync } from 'node:fs';
import { machineCpu, postgresCpuTime } from './proc.js';

interface Sample {
  at: number;
  busySeconds: number;
  ownSeconds: number;
  postgresSeconds: number | undefined;
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
  const sample = (): Sample | undefined => {
    const own = process.cpuUsage();
    const machine = machineCpu();
    return (
      machine && {
        at: performance.now(),
        busySeconds: machine.busy / 1000,
        ownSeconds: (own.user + own.system) / 1e6,
        postgresSeconds: postgresSeconds(postmasterPidFile),
      }
    );
  };
  const first = sample();
  if (!first) return undefined;
  return () => {
    const last = sample()!; // /proc was there at the start
    const elapsed = (last.at - first.at) / 1000;
    const postgresKnown = first.postgresSeconds !== undefined && last.postgresSeconds !== undefined;
    const postgres = postgresKnown ? last.postgresSeconds! - first.postgresSeconds! : 0;
    const others = last.busySeconds - first.busySeconds - (last.ownSeconds - first.ownSeconds) - postgres;
    return { otherCores: Math.max(0, others) / elapsed, postgresKnown };
  };
}
