import { mkdirSync, statSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiHandler } from '../../functions/api-handler.js';
import { createCatalogHandler } from '../../functions/catalog-handler.js';
import { createAuthorizer } from '../../functions/authorizer.js';
import { createGenerateHandler, createJudgeHandler } from '../../functions/workflow-handlers.js';
import { generateApiKey, hashApiKey, isWellFormedKey, keyPrefix } from '../../shared/auth/keys.js';
import { revokeApiKey } from '../../shared/auth/revoke.js';
import type { ApiKeyRecord } from '../../shared/storage/api-keys.js';
import { PROVIDERS, type ProviderId } from '../../shared/catalog/types.js';
import { MemoryClaimCheck } from '../../shared/claim-check/memory.js';
import { ConfigError, type GatewayConfig } from '../../shared/config.js';
import { creditsToMicro, microToCredits } from '../../shared/credits/credits.js';
import { FUNCTION_MARGIN_MS } from '../../shared/deadlines.js';
import { createGateway, type Gateway } from '../../shared/gateway.js';
import { createWorkflowTasks } from '../../shared/workflow-tasks.js';
import { STALLED_READER_MS, type ApiResult } from '../../shared/http/event-stream.js';
import { lazy } from '../../shared/lazy.js';
import { silentLog, type Log } from '../../shared/log.js';
import { isSimulated } from '../../shared/providers/router.js';
import { buildPage } from '../stack/bundle.js';
import { startSimulator, type Simulator } from './simulator/server.js';
import { cacheAuthorizer, createLocalServer } from './server.js';
import { connectStore, startEmbeddedStore, type EmbeddedStore } from './store.js';
import { createLocalWorkflow } from './workflow/runner.js';

export interface LocalHost {
  /** Base URL of the API, e.g. http://127.0.0.1:3000 */
  url: string;
  demo: { accountId: string; apiKey: string; balance: number };
  store: EmbeddedStore;
  simulator: Simulator;
  gateway: Gateway;
  /** Where judged requests keep payloads too large for a workflow state (empty between requests). */
  claimCheck: MemoryClaimCheck;
  /** Providers answered by the simulator. */
  simulatedProviders: ProviderId[];
  /**
   * Resolves once every request answered so far has finished what follows its answer
   * (settle, ledger, prompt log): a balance read after it is final.
   */
  settled(): Promise<void>;
  /** Requests whose handler has been entered and that have not yet finished what follows their answers. */
  inFlight(): number;
  /** Connections with a request being read, run or answered (an answer still going to its reader). */
  answering(): number;
  /**
   * Stops taking connections, lets the requests in flight run to their end (answered, charged,
   * their records written), then closes the simulator and the store.
   */
  close(): Promise<void>;
}

const DEMO_ACCOUNT_ID = 'acct_demo';
const RECONCILE_EVERY_MS = 60_000;

/**
 * Closing, how long a connection may move nothing (its answer's reader taking none of it, its
 * request's body not arriving) before it is closed: the stalled reader's minute a running host
 * gives an answer too (STALLED_READER_MS). Shorter, it had cut steady readers of large answers:
 * the kernel takes a writer's next bytes only once much of its buffer of megabytes has gone, so
 * a reader taking 200 KB a second showed no progress for seconds at a time.
 */
const CLOSE_STALLED_MS = STALLED_READER_MS;

/**
 * The whole gateway on one machine: the embedded store with the stack's tables, the
 * provider simulator, and the same authorizer and `api` handlers behind a loopback
 * HTTP server. Ports 0 pick free ports (tests).
 */
export async function startLocalHost(
  config: GatewayConfig,
  options: { log?: Log; simulatorLatencyMs?: number; recordSimulatorBodies?: boolean; closeStalledMs?: number } = {},
): Promise<LocalHost> {
  if (config.demoApiKey !== undefined && !isWellFormedKey(config.demoApiKey)) {
    // A key the authorizer never accepts would be printed as the demo key, and every request with it answered 401.
    throw new ConfigError('DEMO_API_KEY must be 16 to 256 characters of A-Z, a-z, 0-9 and . _ ~ + / = - (what the gateway accepts as a key)');
  }
  if (config.dataDir !== undefined) {
    // One that was there already keeps its permissions: said when other users may read it.
    const mode = ensureDataDir(config.dataDir);
    if (mode & 0o077) {
      (options.log ?? silentLog).warn('GATEWAY_DATA_DIR is readable by other users of this machine: its store holds prompt logs, balances and key hashes', {
        dataDir: config.dataDir,
        mode: `0${mode.toString(8)}`,
        fix: `chmod 700 ${config.dataDir}`,
      });
    }
  }
  const store = await startEmbeddedStore({ port: config.dynamodbPort, dataDir: config.dataDir });
  let simulator: Simulator | undefined;
  try {
    // The last thousand calls are kept, with their bodies (attachments included) unless told otherwise (npm start).
    simulator = await startSimulator({ latencyMs: options.simulatorLatencyMs ?? 0, maxRecordedCalls: 1_000, recordBodies: options.recordSimulatorBodies ?? true });
    return await startGateway(config, store, simulator, options.log ?? silentLog, options.closeStalledMs ?? CLOSE_STALLED_MS);
  } catch (error) {
    // Nothing started may outlive a failed start (the store's thread would keep the process alive).
    await simulator?.close();
    await store.close();
    throw error;
  }
}

async function startGateway(config: GatewayConfig, store: EmbeddedStore, simulator: Simulator, log: Log, closeStalledMs: number): Promise<LocalHost> {
  const localConfig: GatewayConfig = { ...config, dynamodbEndpoint: store.endpoint };
  const storeClient = await connectStore(store, config.tables);
  const routerOptions = { simulatorBaseUrl: (provider: ProviderId) => simulator.baseUrl(provider) };
  // Judged requests run the stack's own workflow definition, its tasks bound to the generate and judge handlers.
  // Claim-check objects live for one request (a day at most, as the bucket keeps them), so memory is enough even with GATEWAY_DATA_DIR.
  const claimCheck = new MemoryClaimCheck();
  const tasks = createWorkflowTasks(localConfig, { ...routerOptions, log, claimCheck });
  const timeoutMs = functionTimeoutMs(config);
  const workflow = createLocalWorkflow({ generate: createGenerateHandler(() => tasks), judge: createJudgeHandler(() => tasks) }, { functionTimeoutMs: timeoutMs });
  const gateway = createGateway(localConfig, { ...routerOptions, log, storeClient, judging: { workflow, claimCheck } });
  const demo = await ensureDemoAccount(gateway, config);
  // What requests still write after their answers (settled() waits for it), and each request
  // from the moment its handler is entered to the end of those writes: closing waits for
  // these before the store goes, so that a request whose models were called is settled.
  const finishing = new Set<Promise<void>>();
  const running = new Set<Promise<void>>();
  const track = (set: Set<Promise<void>>, work: Promise<void>) => {
    set.add(work);
    return work.finally(() => set.delete(work));
  };
  const api = createApiHandler(() => gateway, log);
  const server = createLocalServer(
    {
      authorizer: cacheAuthorizer(
        createAuthorizer(() => gateway),
        config.authorizerCacheSeconds * 1000,
      ),
      api: (event, context) => {
        const answered = api(event, context).then((result: ApiResult) => {
          // What follows the answer (for an event stream, once its run has ended): settled() waits for it too.
          if (result.finished) void track(finishing, result.finished);
          return result;
        });
        void track(
          running,
          answered.then(
            (result) => result.finished,
            () => undefined,
          ),
        );
        return answered;
      },
      // The page is built by esbuild on its first request (about 50 ms), as the stack builds it into the catalog bundle.
      catalog: createCatalogHandler(log, lazy(buildPage)),
    },
    log,
    { apiTimeoutMs: timeoutMs },
  );
  const settled = async () => {
    await Promise.all(finishing);
  };
  await listen(server, config.port);
  // The reconciler's schedule in AWS is an EventBridge rule; here a timer.
  const reconciler = setInterval(() => {
    gateway.credits.reconcile().catch((error: unknown) => log.error('Reconcile failed', { errorName: (error as Error).name }));
  }, RECONCILE_EVERY_MS);
  reconciler.unref();
  const { port } = server.address() as AddressInfo;

  const simulatedProviders = PROVIDERS.filter((provider) => isSimulated(localConfig, provider, routerOptions));
  return {
    url: `http://127.0.0.1:${port}`,
    demo,
    store,
    simulator,
    gateway,
    claimCheck,
    simulatedProviders,
    settled,
    inFlight: () => running.size,
    answering: () => server.answering(),
    close: async () => {
      clearInterval(reconciler);
      // No new connections, idle ones closed; the requests in flight run to their end (their
      // deadline at most), are answered and settled, and their answers written whole (an event
      // stream's queued events) while their readers take them; then whatever connection is left
      // goes, one that moved nothing for closeStalledMs (CLOSE_STALLED_MS) with it.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      while (running.size > 0) await Promise.all(running);
      await server.answersWritten(closeStalledMs);
      server.closeAllConnections();
      await closed;
      await settled();
      gateway.storeClient.destroy();
      await simulator.close();
      await store.close();
    },
  };
}

/**
 * The demo key as `npm start` prints it: one this start generated in full (the README's
 * curl needs it, and it lives only as long as this run's data); a pinned DEMO_API_KEY by its
 * prefix only (the operator has it; a long-lived key does not belong in scrollback or a CI log).
 */
export function printedDemoKey(apiKey: string, pinned: boolean): string {
  return pinned ? `${keyPrefix(apiKey)}… (DEMO_API_KEY)` : apiKey;
}

/**
 * The functions' timeout, as the stack deploys them for this request deadline: its integration
 * timeout, REQUEST_DEADLINE_MS and FUNCTION_MARGIN_MS (at most MAX_FUNCTION_TIMEOUT_MS, as the
 * longest deadline is that margin short of it).
 */
function functionTimeoutMs(config: GatewayConfig): number {
  return config.requestDeadlineMs + FUNCTION_MARGIN_MS;
}

/**
 * The demo account and key. DEMO_API_KEY pins the key (kept across runs with a data
 * dir); otherwise a new key is issued each start, shown once. Either way, a random key an
 * earlier start issued itself (with a data dir) is revoked, and a pinned one by a start that
 * pins another: the key this start gives is the demo key, and keys printed to old terminals,
 * or pinned before a leaked one was changed, stop working. Keys made with the admin CLI, and
 * keys pinned before starts marked theirs, are left alone.
 */
async function ensureDemoAccount(gateway: Gateway, config: GatewayConfig): Promise<LocalHost['demo']> {
  let account = await gateway.accounts.get(DEMO_ACCOUNT_ID);
  account ??= await gateway.credits.openAccount({ accountId: DEMO_ACCOUNT_ID, balanceMicro: creditsToMicro(config.demoCredits) });
  const apiKey = config.demoApiKey ?? generateApiKey();
  const keyHash = hashApiKey(apiKey);
  const existing = await gateway.apiKeys.get(keyHash);
  // A pinned key (a fresh key is never stored yet) that this data dir holds otherwise: a setting to change, one line from npm start.
  if (existing?.revokedAt) {
    throw new ConfigError(
      `DEMO_API_KEY was revoked (${existing.revokedAt}) in the store of GATEWAY_DATA_DIR (${config.dataDir}): pin another key, or unset DEMO_API_KEY for a new one each start`,
    );
  }
  if (existing && existing.accountId !== account.accountId) {
    throw new ConfigError(`DEMO_API_KEY is a key of account ${existing.accountId} in the store of GATEWAY_DATA_DIR (${config.dataDir}), not of the demo account: pin another key`);
  }
  // The key this start prints stays, should an earlier start have printed it (and DEMO_API_KEY pin it now). A start
  // that pins a key revokes the keys pinned before it (one changed because it leaked); one that pins none, the random
  // ones only: a start without the setting (another shell) leaves the pinned key to the next start that pins it.
  const pinned = config.demoApiKey !== undefined;
  const sweep = (key: ApiKeyRecord) => key.issuedBy === 'local-demo' || (pinned && key.issuedBy === 'local-demo-pinned');
  const issued = (await gateway.apiKeys.listByAccount(account.accountId)).filter((key) => sweep(key) && !key.revokedAt && key.keyHash !== keyHash);
  await Promise.all(issued.map((key) => revokeApiKey(gateway, key.keyHash)));
  if (!existing) {
    const record = { keyHash, accountId: account.accountId, keyPrefix: keyPrefix(apiKey), createdAt: new Date().toISOString() };
    await gateway.apiKeys.put({ ...record, issuedBy: pinned ? 'local-demo-pinned' : 'local-demo' });
  } else if (pinned && existing.issuedBy === 'local-demo') {
    // A key an earlier start printed (or stored before pinned keys had their own mark), pinned now: kept as pinned.
    await gateway.apiKeys.markPinned(keyHash);
  }
  return { accountId: account.accountId, apiKey, balance: microToCredits(account.balanceMicro) };
}

/**
 * GATEWAY_DATA_DIR as a directory, made should it not exist: a path that names a file, or
 * lies under one, or cannot be made, is a setting to change, one line from `npm start`
 * (it was an EEXIST stack trace from mkdir). Made for this user alone (0700): the store in it
 * holds prompt logs, balances and key hashes. One that exists keeps its permissions. Answers
 * its permissions (mode & 0o777).
 */
function ensureDataDir(dir: string): number {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stats = statSync(dir);
    if (!stats.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'EEXIST' });
    return stats.mode & 0o777;
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const why = code === 'EEXIST' ? 'it is a file' : code === 'ENOTDIR' ? 'a part of it is a file' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : message;
    throw new ConfigError(`GATEWAY_DATA_DIR must be a directory, or a path where one can be made, got "${dir}": ${why}`);
  }
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}
