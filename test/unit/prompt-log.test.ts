import { describe, expect, it } from 'vitest';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import type { EvaluationOrder } from '../../shared/judging/types.js';
import { toPromptLog } from '../../shared/orchestrator/prompt-log.js';
import type { ModelResult } from '../../shared/compare/result.js';
import { chargedUsd } from '../../shared/pricing/charge.js';
import { body, evaluationOf, PNG_BASE64 } from '../support/fixtures.js';

const JUDGE = 'fam_f-v4-pro';
const [A, B] = ['fam_c-5.4', 'fam_a-opus-4-6'];

function order(overrides: Partial<EvaluationOrder>): EvaluationOrder {
  return { answerA: A, answerB: B, status: 'completed', verdict: null, winner: A, tokensIn: 100, tokensOut: 20, latencyMs: 5, providerCost: 0.001, ...overrides };
}

const evaluation = (orders: [EvaluationOrder, EvaluationOrder]) => evaluationOf(JUDGE, A, B, orders);

describe('Function: toPromptLog', () => {
  it("keeps, under zero data retention, each judge's usage totals that add up to what its calls were charged, estimated ones included", () => {
    // Prepare: one call with its vendor's usage, one whose usage was missing (charged its estimate), two failed.
    const orders = [
      order({ providerCost: 0.001 }),
      order({ providerCost: null, estimatedCost: 0.0025 }),
      order({ status: 'failed', winner: null, tokensIn: 0, tokensOut: 0, providerCost: 0 }),
      order({ status: 'failed', winner: null, tokensIn: 0, tokensOut: 0, providerCost: 0 }),
    ];
    const evaluations = [evaluation([orders[0]!, orders[1]!]), evaluation([orders[2]!, orders[3]!])];
    const request = validatePromptRequest(body({ models: [A, B], judges: [JUDGE], zero_data_retention: true }));

    // Act
    const { meta, content } = toPromptLog({ promptLogId: 'pl_1', accountId: 'acct_1', request, results: [], evaluations, chargedMicro: 0, zeroDataRetention: true, receivedAt: 0 });

    // Assess
    expect(content).toBeUndefined();
    expect(meta.evaluations).toBeUndefined();
    expect(meta.judgeUsage).toEqual([{ judgeModelId: JUDGE, calls: 4, failedCalls: 2, tokensIn: 200, tokensOut: 40, providerCost: 0.001, estimatedCost: 0.0025 }]);
    const [usage] = meta.judgeUsage!;
    expect(usage!.providerCost + usage!.estimatedCost).toBeCloseTo(chargedUsd(orders).usd, 12);
  });

  it("keeps each evaluation's estimated cost beside its providerCost, so that the record's costs add up to what its judge calls were charged", () => {
    const orders = [order({ providerCost: 0.001 }), order({ providerCost: null, estimatedCost: 0.0025 })];
    // As toEvaluation adds its orders up: with one order estimated, the pair's charge is its estimatedCost.
    const judged = evaluationOf(JUDGE, A, B, [orders[0]!, orders[1]!], { providerCost: null, estimatedCost: 0.0035 });
    const request = validatePromptRequest(body({ models: [A, B], judges: [JUDGE] }));
    const { meta } = toPromptLog({
      promptLogId: 'pl_1',
      accountId: 'acct_1',
      request,
      results: [],
      evaluations: [judged],
      chargedMicro: 0,
      zeroDataRetention: false,
      receivedAt: 0,
    });
    const [logged] = meta.evaluations!;
    expect(logged).toMatchObject({ providerCost: judged.providerCost, estimatedCost: judged.estimatedCost });
    expect((logged!.providerCost ?? 0) + (logged!.estimatedCost ?? 0)).toBeCloseTo(chargedUsd(orders).usd, 12);
  });

  it('keeps the size of each attachment as its decoded bytes, padding left out', () => {
    const png = (bytes: number) => Buffer.concat([Buffer.from(PNG_BASE64, 'base64'), Buffer.alloc(bytes - 16)]);
    const attachments = [16, 17, 18].map((bytes, i) => ({ name: `a${i}.png`, type: 'image/png' as const, base64: png(bytes).toString('base64') }));
    expect(attachments.map((a) => a.base64.slice(-2))).toEqual(['==', 'A=', 'AA']);
    const request = validatePromptRequest(body({ models: [A], attachments }));
    const { content } = toPromptLog({ promptLogId: 'pl_1', accountId: 'acct_1', request, results: [], evaluations: [], chargedMicro: 0, zeroDataRetention: false, receivedAt: 0 });
    expect(content!.attachments!.map((a) => a.bytes)).toEqual([16, 17, 18]);
  });

  it('keeps, without zero data retention, the outputs of the completed models only: a failed or cancelled model (its output "", as results say) has no entry', () => {
    const C = 'fam_k-8b';
    const result = (modelId: string, status: ModelResult['status'], output: string): ModelResult => ({
      modelId,
      status,
      output,
      tokensIn: 10,
      tokensOut: status === 'completed' ? 5 : 0,
      latencyMs: 3,
      providerCost: status === 'completed' ? 0.0001 : 0,
      ...(status === 'completed' ? {} : { error: { code: status === 'failed' ? 'upstream_error' : 'cancelled', message: status } }),
    });
    const results = [result(A, 'completed', 'The first answer.'), result(B, 'failed', ''), result(C, 'cancelled', '')];
    const request = validatePromptRequest(body({ models: [A, B, C] }));
    const { meta, content } = toPromptLog({
      promptLogId: 'pl_1',
      accountId: 'acct_1',
      request,
      results,
      evaluations: [],
      chargedMicro: 100,
      zeroDataRetention: false,
      receivedAt: 0,
    });
    expect(content!.outputs).toEqual([{ modelId: A, output: 'The first answer.' }]);
    // The metadata still lists every model, with its status.
    expect(meta.models.map((m) => [m.modelId, m.status])).toEqual([
      [A, 'completed'],
      [B, 'failed'],
      [C, 'cancelled'],
    ]);
  });
});
