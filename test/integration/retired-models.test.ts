import { describe, expect, it } from 'vitest';
import { shutDown } from '../../infra/local/simulator/shut-down.js';
import { resolveModel } from '../../shared/catalog/index.js';
import { MODELS } from '../../shared/catalog/models.js';
import { body } from '../support/fixtures.js';
import { post, useTestHost } from '../support/local.js';

/**
 * The catalog's retired IDs through the gateway and the provider simulator, which refuses a
 * vendor model its vendor has shut down as that vendor does: a retired ID still gets its
 * answer, from its successor, and no call names the model that is gone.
 */
const host = useTestHost();

describe('POST /api/v1/prompt with retired IDs', () => {
  it('answers every retired ID in effect with its successor, and sends no vendor the name of a model it has shut down', async () => {
    const retired = MODELS.filter((entry) => entry.retirement && shutDown(entry.provider, entry.upstreamModel));
    expect(retired.length).toBeGreaterThan(0);

    const { status, body: answer } = await post(host(), body({ models: retired.map((entry) => entry.id) }));

    expect(status).toBe(200);
    for (const [i, entry] of retired.entries()) {
      const successor = resolveModel(entry.retirement!.successor)!;
      expect(answer.results[i], entry.id).toMatchObject({
        modelId: entry.id,
        status: 'completed',
        warnings: expect.arrayContaining([
          expect.stringContaining(`shut ${entry.upstreamModel} down on ${entry.retirement!.on}; ${successor.upstreamModel} (${successor.id}) answers`),
        ]),
      });
    }
    const calls = host().simulator.calls();
    const sent = calls.map((call) => call.model);
    expect(sent).toHaveLength(retired.length);
    expect(calls.filter((call) => shutDown(call.provider, call.model))).toEqual([]);
    expect(new Set(sent)).toEqual(new Set(retired.map((entry) => resolveModel(entry.retirement!.successor)!.upstreamModel)));
  });
});
