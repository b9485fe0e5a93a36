/**
 * CPU time from Linux's /proc, for CPU per request: one thread's (the gateway's main
 * thread, beside the store's thread in the same process) or a whole process's (Portkey's).
 * Elsewhere than Linux there is no figure (null).
 */
import { readFileSync } from 'node:fs';

/** CPU time (ms, to the nanosecond) a thread has run: its schedstat's first field. The main thread's id is the process id. */
export function threadCpuMs(pid: number, tid = pid): number | null {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
}

/** User and system CPU time (ms, in clock ticks of 10 ms) of a whole process, every thread included. */
export function processCpuMs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime, fields 14 and 15 of proc(5), counted from the state (field 3); 100 ticks a second.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}
