import { afterAll, beforeEach } from 'vitest';
import { startSimulator, type Simulator } from '../../infra/local/simulator/server.js';

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
