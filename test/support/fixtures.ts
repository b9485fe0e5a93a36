import type { Evaluation, EvaluationOrder } from '../../shared/judging/types.js';
import { pdfOf } from './pdfs.js';

/** Small valid attachments: real file signatures, so the content check passes. */
export const PNG_BASE64 = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]).toString('base64');
export const PDF_BASE64 = pdfOf({ pages: 1 }).toString('base64');

export function body(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { prompt: 'Compare these models', models: ['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro'], ...overrides };
}

/** One model of every family, each through its own wire protocol. */
export const ONE_PER_FAMILY = [
  'fam_a-haiku-4-5',
  'fam_b-3.5-flash',
  'fam_c-5.4-mini',
  'o4-mini',
  'fam_d-4.3',
  'fam_e-gpt-oss-120b',
  'fam_f-v4-flash',
  'fam_g-small',
  'fam_h-micro',
  'fam_i-gpt-oss-20b',
  'fam_j3-32b',
  'fam_k-8b',
  'fam_l',
];

/**
 * An evaluation of `a` and `b` by `judge` made of `orders`: failed when either order
 * failed, no winner or scores, no usage; `extra` sets the rest.
 */
export function evaluationOf(judge: string, a: string, b: string, orders: [EvaluationOrder, EvaluationOrder], extra: Partial<Evaluation> = {}): Evaluation {
  return {
    judgeModelId: judge,
    modelA: a,
    modelB: b,
    status: orders.some((o) => o.status === 'failed') ? 'failed' : 'completed',
    winner: null,
    consistent: false,
    scores: null,
    weightedScores: null,
    orders,
    tokensIn: 0,
    tokensOut: 0,
    latencyMs: 0,
    providerCost: 0,
    lengths: {},
    inRanking: true,
    ...extra,
  };
}

/** A chat completion (Cerebras's gpt-oss-120b) answering `content`, its usage block `usage`: what a stand-in vendor is made to answer. */
export function chatCompletionAnswer(content: string, usage: Record<string, unknown> | undefined): Record<string, unknown> {
  return {
    id: 'chatcmpl-hostile',
    object: 'chat.completion',
    created: 1_763_000_000,
    model: 'gpt-oss-120b',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage,
  };
}
