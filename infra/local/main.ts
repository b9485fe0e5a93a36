import { ConfigError, loadConfig, type GatewayConfig } from '../../shared/config.js';
import { logger } from '../../functions/logger.js';
import { printedDemoKey, startLocalHost } from './host.js';

/** `npm start`: the gateway on this machine. */

/**
 * The usual first-run failures deserve one clear line, not a stack trace: a setting that is
 * not valid (every ConfigError names its variable) and a port in use. Anything else is a fault,
 * with its stack.
 */
function stopOnStartFailure(error: NodeJS.ErrnoException, config?: GatewayConfig): never {
  if (error instanceof ConfigError) {
    process.stderr.write(`npm start: ${error.message}\n`);
    process.exit(1);
  }
  // A port the host could not listen on: which, why, and the variables that choose them.
  const why =
    error.code === 'EADDRINUSE'
      ? ['is in use', 'free ports']
      : error.code === 'EACCES'
        ? ['needs privileges this user does not have (ports below 1024, as a rule)', '1024 or above']
        : undefined;
  if (why && config) {
    const [problem, fix] = why;
    process.stderr.write(
      `Port ${String((error as { port?: number }).port ?? '')} ${problem}: set PORT (API, now ${config.port}) or DYNAMODB_PORT (embedded store, now ${config.dynamodbPort}) to ${fix}.\n`,
    );
    process.exit(1);
  }
  throw error;
}

// A terminal gone (closed, its ssh session dropped: EIO) or a pipe whose reader has left (EPIPE)
// fails the host's writes to it: they are dropped, and the host stops as it would otherwise (a
// failed write had crashed it mid-stop, its requests in flight unanswered). Any other failure (a
// full disk under a redirected log) stops the host, as before: it would otherwise run unseen.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'EIO') throw error;
  });
}

let config: GatewayConfig;
try {
  config = loadConfig();
} catch (error) {
  stopOnStartFailure(error as NodeJS.ErrnoException);
}
// The simulator keeps no request's body; only its prompt-cache prefix hashes outlive it, as a vendor's cache does (docs/reference.md).
const host = await startLocalHost(config, { log: logger, recordSimulatorBodies: false }).catch((error: NodeJS.ErrnoException) => stopOnStartFailure(error, config));
const simulated = host.simulatedProviders;
const real = ['openai', 'anthropic', 'google', 'xai', 'cerebras', 'deepseek', 'mistral', 'groq', 'bedrock'].filter((p) => !simulated.includes(p as never));

/**
 * A signal this soon after the first is the same Ctrl-C delivered twice: the terminal sends it
 * to the whole process group, and `npm start` passes its own on to its child (which is this
 * process: the script execs node, as a shell between them passed no signal on).
 */
const REPEAT_WITHIN_MS = 1_000;
let closingSince: number | undefined;
// SIGHUP (its terminal closed, its ssh session dropped) stops as SIGTERM does: it had ended the host at once, its requests unanswered and their holds left.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (closingSince !== undefined) {
      if (Date.now() - closingSince < REPEAT_WITHIN_MS) return;
      // A second signal stops at once: a request still running keeps its hold until the reconciler releases it, uncharged.
      process.exit(1);
    }
    closingSince = Date.now();
    const running = host.inFlight();
    const again = `${signal === 'SIGINT' ? 'Ctrl-C' : signal} again stops at once`;
    if (running > 0)
      process.stdout.write(
        `Stopping: ${running === 1 ? '1 request in flight finishes' : `${running} requests in flight finish`} first (${config.requestDeadlineMs / 1000} s at most), and answers go to their readers (one that takes nothing for a minute is cut); ${again}.\n`,
      );
    else if (host.answering() > 0)
      process.stdout.write(`Stopping once the answers still being written reach their readers (one that takes nothing for a minute is cut); ${again}.\n`);
    host.close().then(
      () => {
        process.stdout.write('Stopped.\n');
        process.exit(0);
      },
      () => process.exit(1),
    );
  });
}

// Printed once the signals are handled: a signal sent on seeing it stops the host as Ctrl-C does.
const pinned = config.demoApiKey !== undefined;
process.stdout.write(
  `${[
    '',
    `Model comparison gateway listening on ${host.url}`,
    `  endpoint:    POST ${host.url}/api/v1/prompt`,
    `  demo key:    ${printedDemoKey(host.demo.apiKey, pinned)}`,
    `  balance:     ${host.demo.balance} credits (account ${host.demo.accountId})`,
    `  simulated:   ${simulated.length > 0 ? simulated.join(', ') : 'none'} (provider simulator at ${host.simulator.url})`,
    `  real:        ${real.length > 0 ? real.join(', ') : 'none'}`,
    `  store:       ${host.store.endpoint} (${config.dataDir ? `data in ${config.dataDir}` : 'in memory'})`,
    '',
    'Try it:',
    `  curl -s -H "Authorization: Bearer ${pinned ? '$DEMO_API_KEY' : host.demo.apiKey}" -H "Content-Type: application/json" \\`,
    `    -d '{"prompt":"Say hello","models":["fam_c-5.4","fam_a-opus-4-6","fam_b-3.1-pro"]}' ${host.url}/api/v1/prompt`,
    'Admin CLI against this store:',
    `  DYNAMODB_ENDPOINT=${host.store.endpoint} npm run -s admin -- balance --account ${host.demo.accountId}`,
    '',
  ].join('\n')}\n`,
);
