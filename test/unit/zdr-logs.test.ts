import type { Tracer } from '@aws-lambda-powertools/tracer';
import { describe, expect, it } from 'vitest';
import { traceCalls } from '../../functions/observability.js';
import { printedDemoKey } from '../../infra/local/host.js';
import { errorResponse } from '../../shared/http/response.js';
import { recordingLog } from '../support/log.js';
import { suiteSimulator } from '../support/simulator.js';

const sim = await suiteSimulator();
const SECRET = 'the prompt of acct_a: merger with Globex';

describe('What reaches a log, a trace or a recorded call', () => {
  it('logs an unhandled error by its name and code, never its message', () => {
    const log = recordingLog();
    const error = Object.assign(new TypeError(SECRET), { code: 'ERR_X' });

    expect(errorResponse(error, log).statusCode).toBe(500);

    expect(log.lines).toHaveLength(1);
    expect(JSON.parse(log.lines[0]!)).toEqual(['Unhandled error', { errorName: 'TypeError', errorCode: 'ERR_X' }]);
  });

  it("records a failed store call in X-Ray by the error's name only", async () => {
    const recorded: Error[] = [];
    const subsegment = { namespace: '', addError: (error: Error) => recorded.push(error), close: () => undefined };
    const tracer = { isTracingEnabled: () => true, getSegment: () => ({ addNewSubsegment: () => subsegment }) } as unknown as Tracer;
    const failure = Object.assign(new Error(SECRET), { name: 'ConditionalCheckFailedException' });

    await expect(traceCalls(tracer)('DynamoDB.UpdateItem', () => Promise.reject(failure))).rejects.toBe(failure);

    expect(recorded).toHaveLength(1);
    expect(recorded[0]!.name).toBe('ConditionalCheckFailedException');
    expect(`${recorded[0]!.message}${recorded[0]!.stack}`).not.toContain('Globex');
  });

  it('prints a pinned DEMO_API_KEY by its prefix only, a key generated for this run in full', () => {
    const key = 'mcg_pinnedLongLivedDemoKey0123456789';
    expect(printedDemoKey(key, true)).toBe('mcg_pinn… (DEMO_API_KEY)');
    expect(printedDemoKey(key, false)).toBe(key);
  });

  it("never records a Bedrock session token in the simulator's calls", async () => {
    await fetch(`${sim.url}/bedrock/v1/model/amazon.nova-pro-v1%3A0/converse`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'AWS4-HMAC-SHA256 Credential=x', 'x-amz-security-token': 'IQoJb3JpZ2luX2VjEXAMPLETOKEN' },
      body: JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] }),
    });

    const [call] = sim.calls();
    expect(call?.headers['x-amz-security-token']).toBe('[redacted]');
    expect(JSON.stringify(call)).not.toContain('EXAMPLETOKEN');
  });
});
