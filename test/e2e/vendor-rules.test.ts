import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LocalHost } from '../../infra/local/host.js';
import { body, ONE_PER_FAMILY } from '../support/fixtures.js';
import { post, startTestHost, type Answer } from '../support/local.js';

/**
 * Issue 17, item 5: every request that passes validation is one the vendor accepts. Each
 * request here either gets the gateway's own 400 naming the field, before any provider
 * call and with the balance untouched, or completes on every model: never a vendor's 400.
 * The simulator refuses what each vendor refuses (empty or blank text, a first turn that
 * is not the user's, turns that do not alternate, Groq strict schemas with optional
 * properties), so a request the adapters got wrong would come back as a failed result.
 */

let host: LocalHost;
let balanceBefore: number;
beforeAll(async () => {
  host = await startTestHost({ DEMO_CREDITS: '100000' });
});
afterAll(async () => {
  await host?.close();
});
beforeEach(async () => {
  host.simulator.reset();
  balanceBefore = (await host.gateway.accounts.get(host.demo.accountId))!.balanceMicro;
});

async function expectRefusedAt(answer: Answer, field: string, message: RegExp): Promise<void> {
  expect(answer.status).toBe(400);
  expect(answer.body.error.code).toBe('invalid_request');
  expect(answer.body.error.details).toContainEqual({ field, message: expect.stringMatching(message) });
  expect(host.simulator.calls()).toHaveLength(0);
  expect((await host.gateway.accounts.get(host.demo.accountId))!.balanceMicro).toBe(balanceBefore);
}

function expectAllCompleted(answer: Answer, models: readonly string[]): void {
  expect(answer.status).toBe(200);
  expect(answer.body.results.map((r: { modelId: string }) => r.modelId)).toEqual(models);
  for (const result of answer.body.results) expect(result, JSON.stringify(result)).toMatchObject({ status: 'completed', output: expect.stringMatching(/\S/) });
  expect(host.simulator.calls()).toHaveLength(models.length);
}

describe('Blank text', () => {
  it.each([
    ['empty', ''],
    ['whitespace-only', ' \n\t '],
  ])('refuses %s history content with a 400 on /history/0/content for Anthropic and Bedrock (the issue: vendor 400s)', async (_name, content) => {
    const answer = await post(
      host,
      body({
        models: ['fam_a-haiku-4-5', 'fam_h-micro'],
        history: [
          { role: 'user', content },
          { role: 'assistant', content: 'Hi.' },
        ],
      }),
    );
    await expectRefusedAt(answer, '/history/0/content', /non-whitespace text/);
  });

  it('refuses a whitespace-only prompt and system block with a 400 naming each', async () => {
    const answer = await post(host, body({ models: ['fam_b-3.5-flash'], prompt: '  ', system_prompt: [{ type: 'text', text: '\n' }] }));
    await expectRefusedAt(answer, '/prompt', /non-whitespace text/);
    expect(answer.body.error.details).toContainEqual({ field: '/system_prompt/0/text', message: 'must contain non-whitespace text' });
  });

  it('takes a blank string system prompt as none, on every family', async () => {
    expectAllCompleted(await post(host, body({ models: ONE_PER_FAMILY, system_prompt: ' ' })), ONE_PER_FAMILY);
  });
});

describe('A history that starts with an assistant turn', () => {
  const history = [{ role: 'assistant', content: 'Hello, ask me about caching.' }];

  it('is refused with a 400 on /history/0/role before any call when Nova is asked (the issue: "must start with a user message")', async () => {
    const answer = await post(host, body({ models: ['fam_c-5.4-mini', 'fam_h-micro'], history }));
    await expectRefusedAt(answer, '/history/0/role', /^must be user for fam_h-micro: Amazon Bedrock \(Nova\) refuse/);
  });

  it('completes on every model whose vendor takes it', async () => {
    const models = ['fam_b-3.5-flash', 'fam_c-5.4-mini', 'fam_d-4.3', 'fam_e-gpt-oss-120b', 'fam_g-small', 'fam_i-gpt-oss-20b', 'fam_l'];
    expectAllCompleted(await post(host, body({ models, history })), models);
  });
});

describe('Consecutive turns of one role', () => {
  it('complete on every family: merged where the vendor wants turns to alternate (Bedrock, Gemini, DeepSeek)', async () => {
    const history = [
      { role: 'user', content: 'Some context.' },
      { role: 'user', content: 'More context.' },
      { role: 'assistant', content: 'Noted.' },
      { role: 'assistant', content: 'Anything else?' },
      { role: 'user', content: 'One more thing before the question.' },
    ];
    expectAllCompleted(await post(host, body({ models: ONE_PER_FAMILY, history })), ONE_PER_FAMILY);
  });
});

describe('A response schema with an optional property', () => {
  it('completes on Groq gpt-oss, sent non-strict with a warning on that result (the issue: Groq strict refuses it)', async () => {
    const schema = {
      type: 'object',
      properties: { answer: { type: 'string' }, confidence: { type: 'number' } },
      required: ['answer'],
      additionalProperties: false,
    };
    const models = ['fam_i-gpt-oss-20b', 'fam_c-5.4-mini'];
    const answer = await post(host, body({ models, response_schema: schema }));

    expectAllCompleted(answer, models);
    for (const result of answer.body.results) {
      expect(result.warnings, result.modelId).toContainEqual(expect.stringMatching(/^response_schema was sent to .* without strict enforcement/));
      expect(JSON.parse(result.output)).toHaveProperty('answer');
    }
    const groq = host.simulator.calls().find((c) => c.provider === 'groq')!;
    expect((groq.body as { response_format: unknown }).response_format).toMatchObject({ json_schema: { strict: false } });
  });
});
