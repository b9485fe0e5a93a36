/**
 * The provider simulator (every vendor's wire protocol) in a process of its own, with a
 * fixed latency (BENCH_SIMULATOR_LATENCY_MS) unless told one per model: the vendors of a
 * fan-out or a judged comparison, which in real use run on other machines, do not share
 * the gateway's CPU. Tells its URL over IPC; on request, sets a latency, or tells the
 * calls it received last (path, headers with keys redacted, body, model), for the fan-out
 * bench to send the same calls directly and the judging bench to count judge calls.
 */
import type { FaultMatch } from '../../infra/local/simulator/server.js';
import { startSimulator } from '../../infra/local/simulator/server.js';

type Message = { type: 'close' } | { type: 'calls'; last: number } | { type: 'setLatency'; ms: number; match?: FaultMatch };

const simulator = await startSimulator({ latencyMs: Number(process.env.BENCH_SIMULATOR_LATENCY_MS ?? 0) });
process.send?.({ type: 'ready', url: simulator.baseUrl('x').replace(/\/x\/v1$/, '') });
process.on('message', (message: Message) => {
  if (message.type === 'close') void simulator.close().then(() => process.exit(0));
  if (message.type === 'setLatency') {
    simulator.setLatency(message.ms, message.match);
    process.send?.({ type: 'latencySet' });
  }
  if (message.type === 'calls') {
    const calls = simulator.calls().slice(-message.last);
    process.send?.({ type: 'calls', calls: calls.map(({ path, headers, body, model }) => ({ path, headers, body, model })) });
  }
});
