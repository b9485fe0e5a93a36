/**
 * The Portkey gateway (`@portkey-ai/gateway`), the peer that benchmark 1 compares with.
 * It is not a dependency of the project: the bench installs a pinned release on demand
 * into bench/.cache/portkey (outside the repository's node_modules, git-ignored) with
 * `npm install --prefix`, and runs its Node server in a child process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { childEnv, freePort, ROOT } from './children.js';
import type { BenchContext } from './types.js';

export const PORTKEY_VERSION = '1.15.2';
export const PORTKEY_CACHE = join(ROOT, 'bench', '.cache', 'portkey');
const PACKAGE_DIR = join(PORTKEY_CACHE, 'node_modules', '@portkey-ai', 'gateway');
const SERVER = join(PACKAGE_DIR, 'build', 'start-server.js');

export type PortkeyAvailability = { ok: true; version: string } | { ok: false; reason: string };

function installedVersion(): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** Installs the pinned Portkey release into the cache when needed (and allowed); never throws. */
export async function ensurePortkey(context: BenchContext): Promise<PortkeyAvailability> {
  if (context.portkey === 'off') return { ok: false, reason: 'Portkey comparison turned off (--no-portkey)' };
  const installed = installedVersion();
  if (installed === PORTKEY_VERSION && existsSync(SERVER)) return { ok: true, version: installed };
  if (context.portkey === 'if-cached') return { ok: false, reason: `Portkey ${PORTKEY_VERSION} is not installed in bench/.cache/portkey (the smoke run does not install it)` };
  context.log(`  installing @portkey-ai/gateway@${PORTKEY_VERSION} into bench/.cache/portkey ...`);
  mkdirSync(PORTKEY_CACHE, { recursive: true });
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  // --ignore-scripts: its postinstall (patch-package) only matters to its own development.
  const args = ['install', '--prefix', PORTKEY_CACHE, '--no-save', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', `@portkey-ai/gateway@${PORTKEY_VERSION}`];
  const outcome = await new Promise<{ code: number | null; output: string }>((resolve) => {
    let output = '';
    const child = spawn(npm, args, { cwd: PORTKEY_CACHE, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => child.kill(), 180_000);
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: -1, output: error.message });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
  const version = installedVersion();
  if (outcome.code !== 0 || version !== PORTKEY_VERSION || !existsSync(SERVER)) {
    const tail = outcome.output.trim().split('\n').slice(-3).join(' | ');
    return { ok: false, reason: `installing @portkey-ai/gateway@${PORTKEY_VERSION} failed (npm exit ${outcome.code}): ${tail || 'no output'}` };
  }
  return { ok: true, version };
}

export interface Portkey {
  url: string;
  /** Its process, for its CPU time. */
  pid: number;
  close(): Promise<void>;
}

/** Starts the installed Portkey server (headless) on a free loopback port and waits until it answers. */
export async function startPortkey(): Promise<Portkey> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [SERVER, `--port=${port}`, '--headless'], {
    cwd: PORTKEY_CACHE,
    env: childEnv({ NODE_ENV: 'production' }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2_000)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (!(await answers(url))) {
    if (child.exitCode !== null) throw new Error(`Portkey exited with ${child.exitCode}: ${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`Portkey did not answer on ${url} within 30 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    pid: child.pid ?? 0,
    close: async () => {
      if (child.exitCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(timer);
    },
  };
}

function answers(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET', timeout: 1_000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
