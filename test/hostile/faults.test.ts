import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalHost } from '../../infra/local/host.js';
import type { FaultRule } from '../../infra/local/simulator/server.js';
import { wireModelId } from '../../shared/catalog/bedrock-profiles.js';
import { allModels, resolveModel } from '../../shared/catalog/index.js';
import type { WireProtocol } from '../../shared/catalog/types.js';
import { usdToMicroCredits } from '../../shared/credits/credits.js';
import { ADAPTERS } from '../../shared/providers/adapters.js';
import { startLocalHost } from '../../infra/local/host.js';
import { post, startTestHost, testConfig, type Answer } from '../support/local.js';

/**
 * The fault matrix of issue 8 ("Failing providers"): every wire protocol (openai-chat once
 * per vendor dialect) against every fault the simulator can inject. For each: the other
 * models of the request complete; the faulty one fails with a clear error code (or
 * completes after retries); it is tried at most 3 times; the request ends inside its
 * deadline; failed calls cost nothing, but for one the deadline stopped at its vendor, which
 * is charged the estimate of the input its vendor read (creditsUsed is what the results
 * cost, and the ledger charged exactly that).
 */

/** One model per protocol, and per vendor dialect of openai-chat. */
const TARGETS: readonly { label: string; model: string }[] = [
  { label: 'openai-chat (xAI)', model: 'fam_d-4.3' },
  { label: 'openai-chat (Cerebras)', model: 'fam_e-gpt-oss-120b' },
  { label: 'openai-chat (DeepSeek)', model: 'fam_f-v4-flash' },
  { label: 'openai-chat (Mistral)', model: 'fam_g-small' },
  { label: 'openai-chat (Groq)', model: 'fam_i-4-scout' },
  { label: 'openai-responses', model: 'fam_c-5.4-nano' },
  { label: 'anthropic-messages', model: 'fam_a-haiku-4-5' },
  { label: 'gemini-generate-content', model: 'fam_b-3.1-flash-lite' },
  { label: 'bedrock-converse', model: 'fam_h-micro' },
];
/** Healthy models beside each faulty one (their upstream names match no fault rule). */
const COMPANIONS = ['fam_c-5.4', 'fam_k-8b'];

const MAX_ATTEMPTS = 3;
const CLEAR_CODES = ['upstream_error', 'upstream_overloaded', 'upstream_rate_limited', 'upstream_unreachable', 'upstream_malformed_response', 'timeout'];

interface Fault {
  name: string;
  rule: FaultRule;
  /** What the faulty model's result must be. */
  outcome:
    | { status: 'failed'; codes: readonly string[]; upstreamStatus?: number; attempts: number; chargedInput?: boolean }
    | { status: 'completed'; attempts: number; costUnavailable?: boolean };
}

const FAULTS: readonly Fault[] = [
  { name: '500', rule: { kind: 'status', status: 500 }, outcome: { status: 'failed', codes: ['upstream_error'], upstreamStatus: 500, attempts: 3 } },
  {
    name: '503',
    rule: { kind: 'status', status: 503 },
    outcome: { status: 'failed', codes: ['upstream_error', 'upstream_overloaded'], upstreamStatus: 503, attempts: 3 },
  },
  {
    name: '429 without Retry-After',
    rule: { kind: 'status', status: 429 },
    outcome: { status: 'failed', codes: ['upstream_rate_limited'], upstreamStatus: 429, attempts: 3 },
  },
  {
    name: '429 with Retry-After: 1',
    rule: { kind: 'status', status: 429, retryAfter: '1' },
    outcome: { status: 'failed', codes: ['upstream_rate_limited'], upstreamStatus: 429, attempts: 3 },
  },
  { name: 'reset connection', rule: { kind: 'reset' }, outcome: { status: 'failed', codes: ['upstream_unreachable'], attempts: 3 } },
  { name: 'malformed JSON', rule: { kind: 'malformed' }, outcome: { status: 'failed', codes: ['upstream_malformed_response'], attempts: 1 } },
  { name: 'empty body', rule: { kind: 'empty' }, outcome: { status: 'failed', codes: ['upstream_malformed_response'], attempts: 1 } },
  { name: 'usage missing', rule: { kind: 'no-usage' }, outcome: { status: 'completed', attempts: 1, costUnavailable: true } },
  { name: '503 twice, then an answer', rule: { kind: 'status', status: 503, times: 2 }, outcome: { status: 'completed', attempts: 3 } },
  { name: '429 once (Retry-After: 0), then an answer', rule: { kind: 'status', status: 429, retryAfter: '0', times: 1 }, outcome: { status: 'completed', attempts: 2 } },
];

/**
 * Faults that need a short deadline: the host for them has a deadline of 2.5 s (models get
 * 1.5 s), set in its configuration itself, under the 10 s REQUEST_DEADLINE_MS takes at the
 * least (a store call may take 7 s before the models go): what is tested is that the
 * deadline holds, whatever its length, not a deployable setting.
 */
const SHORT_DEADLINE_MS = 2_500;
const DEADLINE_FAULTS: readonly Fault[] = [
  { name: 'hang past the deadline', rule: { kind: 'hang' }, outcome: { status: 'failed', codes: ['timeout'], attempts: 1, chargedInput: true } },
  {
    name: '429 with Retry-After past the deadline',
    rule: { kind: 'status', status: 429, retryAfter: '60' },
    outcome: { status: 'failed', codes: ['upstream_rate_limited'], upstreamStatus: 429, attempts: 1 },
  },
  { name: 'slow past the deadline', rule: { kind: 'slow', delayMs: 10_000 }, outcome: { status: 'failed', codes: ['timeout'], attempts: 1, chargedInput: true } },
];

/** The model name the simulator sees: on Bedrock, the inference profile of the host's region. */
const upstream = (id: string) => wireModelId(resolveModel(id)!, host.gateway.config.bedrockRegion);

let host: LocalHost;
let shortHost: LocalHost;
let injected = 0;
let faultyAnswers = 0;

beforeAll(async () => {
  [host, shortHost] = await Promise.all([
    startTestHost({ DEMO_CREDITS: '100000' }),
    startLocalHost({ ...testConfig({ DEMO_CREDITS: '100000' }), requestDeadlineMs: SHORT_DEADLINE_MS }),
  ]);
  // Warm both (the Bedrock SDK loads on its first call) so that timings measure the faults.
  await Promise.all([host, shortHost].map((h) => post(h, { prompt: 'warm up', models: TARGETS.map((t) => t.model) })));
});
afterAll(async () => {
  await Promise.all([host?.close(), shortHost?.close()]);
  console.log(`[faults] ${injected} fault cases injected (${faultyAnswers} faulty upstream answers) over ${TARGETS.length} protocol targets; every other model completed`);
});

/** Sends one request per target at once, the fault applied to every target model, and checks each answer. */
async function runMatrixRow(target: LocalHost, fault: Fault, deadlineMs: number): Promise<void> {
  target.simulator.reset();
  for (const { model } of TARGETS) target.simulator.setFault({ ...fault.rule, model: upstream(model) } as FaultRule);
  const balanceBefore = (await target.gateway.accounts.get(target.demo.accountId))!.balanceMicro;
  const runs = await Promise.all(
    TARGETS.map(async ({ label, model }) => {
      const started = performance.now();
      const answer = await post(target, { prompt: `Fault ${fault.name} on ${label}`, models: [model, ...COMPANIONS] });
      return { label, model, answer, elapsed: performance.now() - started };
    }),
  );
  let chargedTotal = 0;
  for (const { label, model, answer, elapsed } of runs) {
    const context = `${fault.name} on ${label}`;
    injected++;
    expect(answer.status, context).toBe(200);
    expect(elapsed, `${context}: inside the deadline`).toBeLessThan(deadlineMs);
    const [faulty, ...others] = answer.body.results;
    // The other models complete.
    for (const other of others) expect(other, context).toMatchObject({ status: 'completed', providerCost: expect.any(Number) });
    // The faulty model: the expected outcome, within the attempt cap.
    const attempts = target.simulator.calls().filter((c) => c.model === upstream(model)).length;
    faultyAnswers += fault.outcome.status === 'completed' ? attempts - 1 : attempts;
    expect(attempts, `${context}: upstream attempts`).toBeLessThanOrEqual(MAX_ATTEMPTS);
    expect(attempts, `${context}: upstream attempts`).toBe(fault.outcome.attempts);
    if (fault.outcome.status === 'failed') {
      expect(faulty, context).toMatchObject({ modelId: model, status: 'failed', output: '', tokensIn: 0, tokensOut: 0 });
      if (fault.outcome.chargedInput) {
        // The vendor had the call when the deadline stopped it: charged the estimate of its input, with a warning.
        expect(faulty.providerCost, context).toBeNull();
        expect(faulty.estimatedCost, context).toBeGreaterThan(0);
        expect(faulty.warnings?.join(' '), context).toMatch(/deadline stopped the call before its vendor reported usage/);
      } else {
        expect(faulty.providerCost, context).toBe(0);
        expect(faulty.estimatedCost, context).toBeUndefined();
      }
      expect(fault.outcome.codes, `${context}: ${JSON.stringify(faulty.error)}`).toContain(faulty.error.code);
      expect(CLEAR_CODES).toContain(faulty.error.code);
      expect(faulty.error.message, context).toMatch(/\S/);
      if (fault.outcome.upstreamStatus !== undefined) expect(faulty.error.upstreamStatus, context).toBe(fault.outcome.upstreamStatus);
    } else {
      expect(faulty, context).toMatchObject({ modelId: model, status: 'completed', output: expect.stringMatching(/\S/) });
      if (fault.outcome.costUnavailable) {
        // Cost unavailable, and an estimate from the text charged instead: the call is not free.
        expect(faulty.providerCost, context).toBeNull();
        expect(faulty.estimatedCost, context).toBeGreaterThan(0);
        expect(faulty.warnings?.join(' '), context).toMatch(/Cost unavailable: .*usage/i);
        // Said once, by the charge, with what was charged (the adapter had said "cost is unavailable" before it).
        expect(
          faulty.warnings?.filter((warning: string) => /cost (is )?unavailable/i.test(warning)),
          context,
        ).toHaveLength(1);
        // The warnings as written: "no usable usage" had come out "no usable [redacted]".
        expect(faulty.warnings?.join(' '), context).not.toContain('[redacted]');
      } else {
        expect(faulty.providerCost, context).toBeGreaterThan(0);
      }
    }
    // The charge is what the results cost (or their estimates), converted: a failed call costs nothing but where charged above.
    const resultsUsd = answer.body.results.reduce((sum: number, r: any) => sum + (r.providerCost ?? r.estimatedCost), 0);
    const charged = usdToMicroCredits(resultsUsd, target.gateway.config);
    expect(answer.body.creditsUsed, context).toBe(charged / 1e6);
    const settle = (await target.gateway.ledger.list(target.demo.accountId)).find((e) => e.requestId === answer.body.promptLogId && e.kind === 'settle');
    expect(settle?.chargedMicro, `${context}: ledger`).toBe(charged);
    chargedTotal += charged;
  }
  // The balance moved by exactly what was charged.
  expect((await target.gateway.accounts.get(target.demo.accountId))!.balanceMicro).toBe(balanceBefore - chargedTotal);
}

describe('Fault matrix', () => {
  it('covers every wire protocol and every openai-chat vendor', () => {
    const protocols = new Set(TARGETS.map((t) => resolveModel(t.model)!.protocol));
    expect([...protocols].sort()).toEqual((Object.keys(ADAPTERS) as WireProtocol[]).sort());
    const chatProviders = new Set(
      allModels()
        .filter((m) => m.protocol === 'openai-chat')
        .map((m) => m.provider),
    );
    const covered = new Set(
      TARGETS.map((t) => resolveModel(t.model)!)
        .filter((m) => m.protocol === 'openai-chat')
        .map((m) => m.provider),
    );
    expect([...covered].sort()).toEqual([...chatProviders].sort());
    for (const companion of COMPANIONS) expect(TARGETS.map((t) => upstream(t.model))).not.toContain(upstream(companion));
  });

  it('answers each target once when nothing fails', async () => {
    host.simulator.reset();
    const answer: Answer = await post(host, { prompt: 'healthy', models: TARGETS.map((t) => t.model) });
    expect(answer.body.results.map((r: any) => r.status)).toEqual(TARGETS.map(() => 'completed'));
    for (const { model } of TARGETS) expect(host.simulator.calls().filter((c) => c.model === upstream(model))).toHaveLength(1);
  });

  it.each(FAULTS.map((f) => [f.name, f] as const))('%s: isolated, capped, inside the deadline, failed calls free', async (_name, fault) => {
    await runMatrixRow(host, fault, host.gateway.config.requestDeadlineMs);
  });

  it.each(DEADLINE_FAULTS.map((f) => [f.name, f] as const))(
    `%s (REQUEST_DEADLINE_MS=${SHORT_DEADLINE_MS}): the others complete and the request ends in time`,
    async (_name, fault) => {
      await runMatrixRow(shortHost, fault, SHORT_DEADLINE_MS);
    },
  );
});
