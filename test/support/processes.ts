import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** How package.json's scripts run TypeScript (`node --import tsx`: one process, where the `tsx` command starts two). */
const RUN_TS = ['--import', 'tsx'];

/**
 * Runs a TypeScript entry point to completion; returns its exit code and output. Its
 * environment is this one's with `env` over it, or `env` alone (and PATH) with `envOnly`;
 * with `killAfterMs`, it is killed should it run that long (a program expected to stop);
 * `stdin` is written to its standard input, which is closed (else it has none), or, as
 * `{ file }`, opened as its standard input (`/dev/zero`: input without end); with
 * `stdoutClosed`, its standard output is a pipe whose reader has left (`| head` once done).
 */
export async function runTs(
  entry: string,
  args: string[],
  env: Record<string, string>,
  { envOnly = false, killAfterMs, stdin, stdoutClosed = false }: { envOnly?: boolean; killAfterMs?: number; stdin?: string | { file: string }; stdoutClosed?: boolean } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const input = typeof stdin === 'object' ? openSync(stdin.file, 'r') : undefined;
  const child = spawn(process.execPath, [...RUN_TS, entry, ...args], {
    cwd: ROOT,
    env: envOnly ? { PATH: process.env.PATH ?? '', ...env } : { ...process.env, ...env },
    stdio: [input ?? (stdin === undefined ? 'ignore' : 'pipe'), 'pipe', 'pipe'],
    ...(killAfterMs === undefined ? {} : { timeout: killAfterMs, killSignal: 'SIGKILL' as const }),
  });
  if (input !== undefined) closeSync(input);
  let stdout = '';
  let stderr = '';
  // Closed before the program has started: its first write to it fails with EPIPE.
  if (stdoutClosed) child.stdout!.destroy();
  else child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  if (typeof stdin === 'string') child.stdin!.end(stdin);
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/** Starts a long-running TypeScript entry point and resolves once its stdout contains `ready`. */
export async function startTs(entry: string, env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; stdout: () => string }> {
  const child = spawn(process.execPath, [...RUN_TS, entry], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      if (ready.test(stdout)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code} before it was ready:\n${stdout}\n${stderr}`)));
  });
  return { child, stdout: () => stdout };
}
