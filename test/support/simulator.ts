import { afterAll, beforeEach } from 'vitest';
import { startSimulator, type Simulator } from '../../infra/local/simulator/server.js';
import type { ModelReply } from '../../shared/providers/types.js';
import { gate } from './gate.js';

/**
 * The provider simulator for one test file (`const sim = await suiteSimulator()` at its top):
 * reset before each test (rules, latencies, recorded calls, prompt caches), closed after the file.
 */
export async function suiteSimulator(): Promise<Simulator> {
  const sim = await startSimulator();
  afterAll(() => sim.close());
  beforeEach(() => sim.reset());
  return sim;
}

/**
 * One adapter call whose `ready` opens 50 ms after the call began (a store answering the
 * reserve): its reply, and how many calls the simulator had received before the opening.
 */
export async function sendOnceReady(sim: Simulator, send: (ready: Promise<void>) => Promise<ModelReply>): Promise<{ reply: ModelReply; receivedBeforeReady: number }> {
  const ready = gate();
  const replying = send(ready.opened);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const receivedBeforeReady = sim.calls().length;
  ready.open();
  return { reply: await replying, receivedBeforeReady };
}
