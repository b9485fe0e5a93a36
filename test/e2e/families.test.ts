import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalHost } from '../../infra/local/host.js';
import { wireModelId } from '../../shared/catalog/bedrock-profiles.js';
import { resolveModel } from '../../shared/catalog/index.js';
import { MODELS } from '../../shared/catalog/models.js';
import { body, ONE_PER_FAMILY } from '../support/fixtures.js';
import { post, startTestHost } from '../support/local.js';

const SCHEMA = {
  type: 'object',
  properties: { answer: { type: 'string' }, confidence: { type: 'number' }, tags: { type: 'array', items: { type: 'string' } } },
  required: ['answer', 'confidence', 'tags'],
  additionalProperties: false,
};

let host: LocalHost;
beforeAll(async () => {
  host = await startTestHost({ DEMO_CREDITS: '100000' });
});
afterAll(async () => {
  await host?.close();
});

describe('Every family', () => {
  it('completes through its protocol, each to its own provider path', async () => {
    host.simulator.reset();
    const { status, body: answer } = await post(host, body({ models: ONE_PER_FAMILY }));
    expect(status).toBe(200);
    for (const result of answer.results) {
      expect(result, result.modelId).toMatchObject({ status: 'completed', output: expect.stringMatching(/\S/) });
      expect(result.providerCost, result.modelId).toBeGreaterThan(0);
    }
    const protocols = new Set(host.simulator.calls().map((c) => c.protocol));
    expect([...protocols].sort()).toEqual(['anthropic-messages', 'bedrock-converse', 'gemini-generate-content', 'openai-chat', 'openai-responses']);
    for (const id of ONE_PER_FAMILY) {
      const entry = resolveModel(id)!;
      // A Bedrock call names its region's inference profile (`us.amazon.nova-micro-v1:0`).
      const call = host.simulator.calls().find((c) => c.model === wireModelId(entry, host.gateway.config.bedrockRegion));
      expect(call, id).toMatchObject({ provider: entry.provider, protocol: entry.protocol });
    }
  });

  it('returns output that conforms to a shared response_schema, parsed, from every family', async () => {
    const { status, body: answer } = await post(host, body({ models: ONE_PER_FAMILY, response_schema: SCHEMA }));
    expect(status).toBe(200);
    for (const result of answer.results) {
      expect(result.structuredOutput, `${result.modelId}: ${result.output}`).toMatchObject({ conforms: true, value: { answer: expect.any(String) } });
    }
  });

  it('returns conforming output from every model that gets the schema as an instruction (no native structured output)', async () => {
    const instructed = MODELS.filter((model) => model.capabilities.structuredOutput !== 'native').map((model) => model.id);
    expect(instructed).toContain('fam_c-4-turbo');
    const { status, body: answer } = await post(host, body({ models: instructed.slice(0, 32), response_schema: SCHEMA }));
    expect(status).toBe(200);
    for (const result of answer.results) {
      expect(result.structuredOutput, `${result.modelId}: ${result.output}`).toMatchObject({ conforms: true, value: { answer: expect.any(String) } });
    }
  });

  it('reports the token classes beside tokensIn and tokensOut', async () => {
    const { body: answer } = await post(host, body({ models: ['fam_c-5.4', 'fam_a-opus-4-6'], model_tuning: { 'fam_c-5.4': { reasoningEffort: 'high' } } }));
    const [openai] = answer.results;
    expect(openai.usage.reasoningTokensOut).toBeGreaterThan(0);
    expect(openai.usage.reasoningTokensOut).toBeLessThanOrEqual(openai.tokensOut);
    // Anthropic counts thinking inside output_tokens, never apart: no reasoning count, rather than a 0 that says it did not think.
    expect(answer.results[1].usage).toEqual({ cachedTokensIn: 0, cacheWriteTokensIn: 0 });
  });
});
