/** The processes a benchmark starts: the local host, the zero-latency upstream, the provider simulator. */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROVIDERS } from '../../shared/catalog/types.js';
import { MAX_RATE_LIMIT_RPM, MAX_REQUESTS_IN_FLIGHT, providerKeyName } from '../../shared/config.js';
import type { FaultMatch } from '../../infra/local/simulator/server.js';
import type { HostReady, HostRequest, HostUsage } from './host-process.js';
import type { JudgeTaskMemory } from './judge-task-process.js';
import type { BenchContext } from './types.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HERE = fileURLToPath(new URL('.', import.meta.url));

/**
 * Variables a developer's shell may hold that would send benchmark traffic somewhere
 * else (a real vendor, a real AWS account) or change the gateway's configuration: the
 * children never inherit them.
 */
const SCRUBBED =
  /^(?:[A-Z]+_API_KEY|[A-Z]+_BASE_URL|AWS_.*|BEDROCK_.*|DEMO_.*|GATEWAY_DATA_DIR|PORT|DYNAMODB_.*|SIMULATE_PROVIDERS|RATE_LIMIT_RPM|CREDITS_PER_USD|MARKUP|REQUEST_DEADLINE_MS|.*_TABLE|NODE_OPTIONS)$/;

export function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !SCRUBBED.test(name)) env[name] = value;
  }
  return {
    ...env,
    PORT: '0',
    DYNAMODB_PORT: '0',
    AWS_REGION: 'us-east-1',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...extra,
  };
}

/** A TypeScript child with an IPC channel, run through tsx; resolves with its first 'ready' message. */
async function forkTs<T>(script: string, env: Record<string, string>, execArgv: string[]): Promise<{ child: ChildProcess; ready: T; stderr: () => string }> {
  const child = fork(join(HERE, script), [], { cwd: ROOT, env, execArgv: ['--import', 'tsx', ...execArgv], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4_000);
  });
  const ready = await new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`${script} was not ready within 60 s:\n${stderr}`));
    }, 60_000);
    child.on('message', (message: { type?: string }) => {
      if (message.type === 'ready') {
        clearTimeout(timer);
        resolve(message as T);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code} before it was ready:\n${stderr}`));
    });
  });
  return { child, ready, stderr: () => stderr };
}

/** Waits for a child to exit; kills it if it has not after `ms`. */
async function exited(child: ChildProcess, ms: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export interface Upstream {
  /** e.g. http://127.0.0.1:41234; chat completions at `${url}/v1/chat/completions`. */
  url: string;
  close(): Promise<void>;
}

export async function startUpstream(): Promise<Upstream> {
  const { child, ready } = await forkTs<{ url: string }>('upstream-process.ts', childEnv({}), []);
  return {
    url: ready.url,
    close: async () => {
      if (child.connected) child.send({ type: 'close' });
      await exited(child, 5_000);
    },
  };
}

export interface SimulatorProcess {
  /** Its base URL, e.g. http://127.0.0.1:41234 (a recorded call's path follows it). */
  url: string;
  /** The host's environment that sends every provider (Bedrock included) to this simulator, as real vendors would be configured. */
  vendorEnv: Record<string, string>;
  /** The last `count` calls it received, in arrival order: path, headers (keys redacted), parsed JSON body and model. */
  lastCalls(count: number): Promise<RecordedCall[]>;
  /** Its latency from now on: for every call, or for the calls that `match` picks (a model, a provider). */
  setLatency(ms: number, match?: FaultMatch): Promise<void>;
  close(): Promise<void>;
}

export interface RecordedCall {
  path: string;
  headers: Record<string, string | undefined>;
  body: unknown;
  /** The upstream model the call named (in its body or its path, as its vendor's protocol puts it). */
  model: string;
}

/** The API key every provider is configured with in the bench (the simulator takes any). */
export const VENDOR_KEY = 'bench-key';

/** The provider simulator in its own process, every upstream call answered after `latencyMs`. */
export async function startSimulatorProcess(latencyMs: number): Promise<SimulatorProcess> {
  const { child, ready } = await forkTs<{ url: string }>('simulator-process.ts', childEnv({ BENCH_SIMULATOR_LATENCY_MS: String(latencyMs) }), []);
  const vendorEnv: Record<string, string> = {
    SIMULATE_PROVIDERS: '0',
    // Bedrock signs with the AWS credential chain; the simulator checks no signature.
    AWS_ACCESS_KEY_ID: 'AKIABENCHMARK',
    AWS_SECRET_ACCESS_KEY: 'bench',
    BEDROCK_BASE_URL: `${ready.url}/bedrock/v1`,
  };
  for (const provider of PROVIDERS) {
    if (provider === 'bedrock') continue;
    vendorEnv[providerKeyName(provider)] = VENDOR_KEY;
    vendorEnv[`${providerKeyName(provider).replace(/_API_KEY$/, '')}_BASE_URL`] = `${ready.url}/${provider}/v1`;
  }
  // One request at a time per kind: each is answered by a message of the type named.
  const ask = <T>(request: Record<string, unknown>, answer: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (message: { type?: string } & T) => {
        if (message.type !== answer) return;
        child.off('message', onMessage);
        resolve(message);
      };
      child.on('message', onMessage);
      if (!child.connected) return reject(new Error('the simulator is not running'));
      child.send(request);
    });
  return {
    url: ready.url,
    vendorEnv,
    lastCalls: async (count) => (await ask<{ calls?: RecordedCall[] }>({ type: 'calls', last: count }, 'calls')).calls ?? [],
    setLatency: async (ms, match) => {
      await ask({ type: 'setLatency', ms, match }, 'latencySet');
    },
    close: async () => {
      if (child.connected) child.send({ type: 'close' });
      await exited(child, 5_000);
    },
  };
}

/** The local host (UNLIMITED) whose every provider is the simulator in a process of its own, as vendors are on machines of their own. */
export interface HostWithVendors {
  host: Host;
  vendors: SimulatorProcess;
  close(): Promise<void>;
}

/** Starts the simulator (every call answered after `latencyMs`), then a host configured to call it. */
export async function startHostWithVendors(context: BenchContext, label: string, latencyMs: number): Promise<HostWithVendors> {
  const vendors = await startSimulatorProcess(latencyMs);
  try {
    const host = await startHost(context, label, { ...UNLIMITED, ...vendors.vendorEnv });
    return {
      host,
      vendors,
      close: async () => {
        await host.close();
        await vendors.close();
      },
    };
  } catch (error) {
    await vendors.close();
    throw error;
  }
}

export interface Host extends Omit<HostReady, 'type'> {
  pid: number;
  call<T = unknown>(request: HostRequest): Promise<T>;
  usageStart(): Promise<void>;
  usageStop(): Promise<HostUsage>;
  close(): Promise<void>;
}

/**
 * The local host in its own process, configured by `env` on top of the bench defaults
 * (free ports, in-memory store, silent logs). With `context.cpuProfDir` it runs under
 * --cpu-prof and writes its profiles to `<label>-<time>/` there when it closes.
 */
export async function startHost(context: BenchContext, label: string, env: Record<string, string>): Promise<Host> {
  const execArgv: string[] = [];
  if (context.cpuProfDir) {
    // One folder per process: its main thread and the module-loader thread each write a profile (CPU.<date>.<pid>.<thread>...).
    const dir = join(context.cpuProfDir, `${label}-${Date.now()}`);
    mkdirSync(dir, { recursive: true });
    execArgv.push('--cpu-prof', `--cpu-prof-dir=${dir}`);
  }
  const { child, ready, stderr } = await forkTs<HostReady>('host-process.ts', childEnv(env), execArgv);
  let next = 0;
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  child.on('message', (message: { id?: number; ok?: boolean; value?: unknown; error?: string }) => {
    if (message.id === undefined) return;
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.ok) waiter?.resolve(message.value);
    else waiter?.reject(new Error(`host: ${message.error}`));
  });
  child.once('exit', (code) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`host exited with ${code}:\n${stderr()}`));
    pending.clear();
  });
  const call = <T>(request: HostRequest): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (!child.connected) return reject(new Error(`host is not running:\n${stderr()}`));
      const id = next++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      child.send({ id, request });
    });
  let closed = false;
  return {
    url: ready.url,
    apiKey: ready.apiKey,
    accountId: ready.accountId,
    simulatorUrl: ready.simulatorUrl,
    pid: child.pid ?? 0,
    call,
    usageStart: () => call<void>({ op: 'usageStart' }),
    usageStop: () => call<HostUsage>({ op: 'usageStop' }),
    close: async () => {
      if (closed) return;
      closed = true;
      await call({ op: 'close' }).catch(() => undefined);
      await exited(child, 10_000);
    },
  };
}

/** Bench defaults for a host that must never be slowed by its rate limit or its demo balance. */
export const UNLIMITED = { RATE_LIMIT_RPM: String(MAX_RATE_LIMIT_RPM), MAX_REQUESTS_IN_FLIGHT: String(MAX_REQUESTS_IN_FLIGHT), DEMO_CREDITS: '100000000' } as const;

/** A free loopback port (for a child that cannot be told to use port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** The longest a fresh node script may run. */
const FRESH_NODE_LIMIT_MS = 60_000;

/**
 * Runs an ES module script in a fresh `node` (`nodeArgs` before it), and parses the last line
 * it prints as JSON: a script's log lines may come before it. Rejects, with `what` and the
 * process's stderr, when it exits non-zero or prints no JSON.
 */
export function freshNode<T>(script: string, env: Record<string, string>, what: string, nodeArgs: string[] = []): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, '--input-type=module', '-e', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    // A script that hangs fails the benchmark instead of stalling it.
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill();
    }, FRESH_NODE_LIMIT_MS);
    child.once('error', reject);
    // Once its output is closed too (on exit it may not be yet).
    child.once('close', (code) => {
      clearTimeout(timer);
      try {
        if (code !== 0) throw new Error(killed ? `killed after ${FRESH_NODE_LIMIT_MS} ms` : `exit ${code ?? 'by a signal'}`);
        resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as T);
      } catch (error) {
        reject(new Error(`${what} failed (${(error as Error).message}): ${stderr.slice(0, 500)}`));
      }
    });
  });
}

/** One judge task in a process of its own (judge-task-process.ts): `models` answers of `answerChars` each, judge calls answered after `latencyMs`. */
export async function measureJudgeTask(settings: { models: number; answerChars: number; latencyMs: number }): Promise<JudgeTaskMemory> {
  const env = childEnv({
    BENCH_JUDGE_MODELS: String(settings.models),
    BENCH_JUDGE_ANSWER_CHARS: String(settings.answerChars),
    BENCH_SIMULATOR_LATENCY_MS: String(settings.latencyMs),
  });
  // Its one message, once it has measured, is its 'ready'.
  const { child, ready } = await forkTs<JudgeTaskMemory>('judge-task-process.ts', env, []);
  await exited(child, 10_000);
  return ready;
}
