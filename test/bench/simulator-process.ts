/**
 * The provider simulator (every vendor's wire protocol) in a process of its own, with a
 * fixed latency (BENCH_SIMULATOR_LATENCY_MS): the vendors of a fan-out, which in real use
 * run on other machines, do not share the gateway's CPU. Tells its URL over IPC, and on
 * request the calls it received last (path, headers with keys redacted, body), for the
 * fan-out bench to send the same calls directly.
 */
import { startSimulator } from '../../infra/local/simulator/server.js';

const simulator = await startSimulator({ latencyMs: Number(process.env.BENCH_SIMULATOR_LATENCY_MS ?? 0) });
process.send?.({ type: 'ready', url: simulator.baseUrl('x').replace(/\/x\/v1$/, '') });
process.on('message', (message: { type?: string; last?: number }) => {
  if (message.type === 'close') void simulator.close().then(() => process.exit(0));
  if (message.type === 'calls') {
    const calls = simulator.calls().slice(-(message.last ?? 0));
    process.send?.({ type: 'calls', calls: calls.map(({ path, headers, body }) => ({ path, headers, body })) });
  }
});
