import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLocalHost, type LocalHost } from '../../infra/local/host.js';
import { resolveModel } from '../../shared/catalog/index.js';
import { wireModelId } from '../../shared/catalog/bedrock-profiles.js';
import type { Log } from '../../shared/log.js';
import { post, testConfig } from '../support/local.js';

/**
 * What an operator reads of each answer: one line per refusal and per prompt that ran, each
 * naming the request by the ID its answer carries (`x-request-id`), and an error line when a
 * vendor refuses the gateway's own key. Nothing of the body in any of them.
 */
type Line = { level: 'info' | 'warn' | 'error'; message: string; fields: Record<string, unknown> };
const lines: Line[] = [];
const log: Log = {
  info: (message, fields = {}) => void lines.push({ level: 'info', message, fields }),
  warn: (message, fields = {}) => void lines.push({ level: 'warn', message, fields }),
  error: (message, fields = {}) => void lines.push({ level: 'error', message, fields }),
};
const MARKER = 'request-log-marker-7f3a';
let host: LocalHost;

beforeAll(async () => {
  host = await startLocalHost(testConfig(), { log });
});
afterAll(async () => {
  await host?.close();
});

/** The lines that name the request whose answer carried `requestId`. */
const linesOf = (requestId: string | null) => lines.filter((line) => line.fields.requestId === requestId);

describe('Log lines of answers', () => {
  it('names a prompt that ran by its x-request-id, beside its promptLogId and account', async () => {
    const answer = await post(host, { prompt: MARKER, models: ['fam_c-5.4'] });
    expect(answer.status).toBe(200);
    const requestId = answer.headers.get('x-request-id');
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(linesOf(requestId)).toEqual([
      {
        level: 'info',
        message: 'Prompt completed',
        fields: expect.objectContaining({ requestId, promptLogId: answer.body.promptLogId, accountId: host.demo.accountId, creditsUsedMicro: expect.any(Number) }),
      },
    ]);
  });

  it("names a replay (an Idempotency-Key's stored answer) by its own x-request-id, with the promptLogId it replays (it had been in no line)", async () => {
    const first = await post(host, { prompt: MARKER, models: ['fam_c-5.4'] }, { 'idempotency-key': 'request-log-replay' });
    const again = await post(host, { prompt: MARKER, models: ['fam_c-5.4'] }, { 'idempotency-key': 'request-log-replay' });
    expect(again.body.promptLogId).toBe(first.body.promptLogId);
    const requestId = again.headers.get('x-request-id');
    expect(requestId).not.toBe(first.headers.get('x-request-id'));
    expect(linesOf(requestId)).toEqual([{ level: 'info', message: 'Prompt replayed', fields: { requestId, promptLogId: first.body.promptLogId, accountId: host.demo.accountId } }]);
  });

  it('says a charge the reconciler is left to decide is undecided, not the credits of the answer as charged (its settle entry went unanswered)', async () => {
    const unanswered = vi.spyOn(host.gateway.ledger, 'putFirst').mockRejectedValue(Object.assign(new Error('injected: no answer'), { name: 'TimeoutError' }));
    try {
      const answer = await post(host, { prompt: MARKER, models: ['fam_c-5.4'] });
      expect(answer.body.creditsUsed).toBeGreaterThan(0);
      await host.settled();
      const completed = linesOf(answer.headers.get('x-request-id')).find((line) => line.message === 'Prompt completed');
      expect(completed?.fields).toMatchObject({ chargeUndecided: true });
      expect(completed?.fields).not.toHaveProperty('creditsUsedMicro');
    } finally {
      unanswered.mockRestore();
    }
  });

  it('logs a refusal of the handler (400) and one before it (401), each with its status and code', async () => {
    const invalid = await post(host, { prompt: MARKER, models: ['not-a-model'] });
    expect(invalid.status).toBe(400);
    expect(linesOf(invalid.headers.get('x-request-id'))).toEqual([
      {
        level: 'info',
        message: 'Request refused',
        fields: { requestId: invalid.headers.get('x-request-id'), accountId: host.demo.accountId, status: 400, errorCode: 'invalid_request' },
      },
    ]);
    const unknownKey = await post(host, { prompt: MARKER, models: ['fam_c-5.4'] }, { authorization: 'Bearer mcg_unknownunknownunknownunknown' });
    expect(unknownKey.status).toBe(401);
    expect(linesOf(unknownKey.headers.get('x-request-id'))).toEqual([
      { level: 'info', message: 'Request refused', fields: { requestId: unknownKey.headers.get('x-request-id'), status: 401, errorCode: 'unauthorized' } },
    ]);
  });

  it("logs an error when a vendor refuses the gateway's own key, with the upstream status, and not for a caller's failure", async () => {
    const openai = wireModelId(resolveModel('fam_c-5.4')!, host.gateway.config.bedrockRegion);
    const mistral = wireModelId(resolveModel('fam_g-small')!, host.gateway.config.bedrockRegion);
    host.simulator.setFault({ kind: 'status', status: 401, model: openai });
    host.simulator.setFault({ kind: 'status', status: 400, model: mistral });
    try {
      const answer = await post(host, { prompt: MARKER, models: ['fam_c-5.4', 'fam_g-small', 'fam_k-8b'] });
      expect(answer.body.results.map((r: { status: string }) => r.status)).toEqual(['failed', 'failed', 'completed']);
      const requestId = answer.headers.get('x-request-id');
      const errors = linesOf(requestId).filter((line) => line.level === 'error');
      expect(errors).toEqual([
        {
          level: 'error',
          message: "A vendor refused the gateway's key",
          fields: { requestId, promptLogId: answer.body.promptLogId, modelId: 'fam_c-5.4', errorCode: 'upstream_error', upstreamStatus: 401 },
        },
      ]);
      const completed = linesOf(requestId).find((line) => line.message === 'Prompt completed');
      expect(completed?.fields.models).toEqual([
        expect.objectContaining({ modelId: 'fam_c-5.4', status: 'failed', upstreamStatus: 401 }),
        expect.objectContaining({ modelId: 'fam_g-small', status: 'failed', upstreamStatus: 400 }),
        expect.objectContaining({ modelId: 'fam_k-8b', status: 'completed' }),
      ]);
    } finally {
      host.simulator.reset();
    }
  });

  it('holds nothing of a request body in any line', () => {
    expect(lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(lines)).not.toContain(MARKER);
  });
});
