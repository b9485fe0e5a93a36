import { afterAll, beforeEach } from 'vitest';
import { startSimulator, type Simulator } from '../../infra/local/simulator/server.js';
import type { ModelReply } from '../../shared/providers/types.js';

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
 * reserve): its reply, and for each call the simulator recorded whether it arrived after
 * the opening.
 */
export async function sendOnceReady(sim: Simulator, send: (ready: Promise<void>) => Promise<ModelReply>): Promise<{ reply: ModelReply; arrivedAfterOpening: boolean[] }> {
  let open!: () => void;
  const replying = send(new Promise<void>((resolve) => (open = resolve)));
  await new Promise((resolve) => setTimeout(resolve, 50));
  const openedAt = Date.now();
  open();
  const reply = await replying;
  return { reply, arrivedAfterOpening: sim.calls().map((recorded) => recorded.at >= openedAt) };
}
