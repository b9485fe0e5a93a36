import { randomBytes } from 'node:crypto';
import { crc32, gunzipSync } from 'node:zlib';
import { Logger } from '@aws-lambda-powertools/logger';
import { paginateScan } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLocalHost, type LocalHost } from '../../infra/local/host.js';
import { resolveModel } from '../../shared/catalog/index.js';
import type { Log } from '../../shared/log.js';
import { postEvents } from '../support/events.js';
import { post, testConfig, type Answer } from '../support/local.js';

/**
 * The zero-data-retention audit of issue 8 ("Privacy and secrets"). Requests carry a
 * unique marker in the prompt, the system prompt (both forms), the history, the response
 * schema, an attachment's name and inside the attachment's bytes (a valid PNG whose tEXt
 * chunk holds it). Then every table of the store, every claim-check object and every log
 * line (the host's `log`, a Powertools logger at DEBUG writing JSON to stdout, and
 * everything written to stdout/stderr meanwhile) are scanned.
 *
 * - Under zero data retention the marker appears nowhere.
 * - Without it, the marker is in the prompt log and nowhere else; attachment bytes are
 *   stored nowhere at all; with an Idempotency-Key the stored response (kept for retries)
 *   holds the outputs but not the prompt.
 */

const AUDIT_SERVICE = 'zdr-audit';
const captured: string[] = [];
const structured: string[] = [];
let host: LocalHost;
let restore: () => void = () => undefined;

/** Tees every write to stdout and stderr into `captured`. */
function captureStdio(): () => void {
  const originals = [process.stdout.write, process.stderr.write] as const;
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write;
    stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
      captured.push(text);
      // The audit's own logger stays out of the test output; everything else passes through.
      if (text.includes(`"service":"${AUDIT_SERVICE}"`)) return true;
      return (original as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof stream.write;
  }
  return () => {
    process.stdout.write = originals[0];
    process.stderr.write = originals[1];
  };
}

beforeAll(async () => {
  restore = captureStdio();
  // The Lambda logger, at its most verbose, writing JSON lines to stdout (captured above).
  const powertools = new Logger({ serviceName: AUDIT_SERVICE, logLevel: 'DEBUG' });
  const log: Log = {
    info: (message, ...extra) => {
      structured.push(JSON.stringify({ level: 'info', message, extra }));
      powertools.info(message, ...extra);
    },
    warn: (message, ...extra) => {
      structured.push(JSON.stringify({ level: 'warn', message, extra }));
      powertools.warn(message, ...extra);
    },
    error: (message, ...extra) => {
      structured.push(JSON.stringify({ level: 'error', message, extra }));
      powertools.error(message, ...extra);
    },
  };
  host = await startLocalHost(testConfig({ DEMO_CREDITS: '100000' }), { log });
});
afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(async () => {
  restore();
  await host?.close();
});

// ---------------------------------------------------------------------------

/** A valid PNG (signature, IHDR, tEXt, IDAT, IEND with correct CRCs) whose tEXt chunk holds `text`. */
function pngWithText(text: string): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([head, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(1, 0); // width
  ihdr.writeUInt32BE(1, 4); // height
  ihdr.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale
  // One scanline: filter byte 0, one pixel; zlib stream of [0, 0].
  const idat = Buffer.from([0x78, 0x9c, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('tEXt', Buffer.from(`Comment\u0000${text}`, 'latin1')),
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The three base64 spellings of `text` at each byte alignment, as it may appear inside a larger base64 string. */
function base64Forms(text: string): string[] {
  return [0, 1, 2].map((pad) => {
    const encoded = Buffer.concat([Buffer.alloc(pad), Buffer.from(text, 'latin1')]).toString('base64');
    // Drop the characters that depend on the neighbouring bytes.
    return encoded.slice(Math.ceil((pad * 4) / 3) + 1, -3);
  });
}

/** Binary attributes as text: gunzipped when gzip (stored responses), else UTF-8, plus their base64. */
function decodeBinary(value: Uint8Array): string {
  const bytes = Buffer.from(value);
  let text = bytes.toString('utf8');
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) text = gunzipSync(bytes).toString('utf8');
  return `${text} ${bytes.toString('base64')}`;
}

/** Every item of every table of the store, with binary attributes decoded, by table. */
async function dumpStore(): Promise<Record<string, string>> {
  const dump: Record<string, string> = {};
  const tables = host.gateway.config.tables;
  expect(Object.keys(tables).sort()).toEqual(['accounts', 'apiKeys', 'idempotency', 'ledger', 'promptLogs']);
  for (const [name, tableName] of Object.entries(tables)) {
    const items: unknown[] = [];
    for await (const page of paginateScan({ client: host.gateway.storeClient.documents }, { TableName: tableName, ConsistentRead: true })) items.push(...(page.Items ?? []));
    dump[name] = JSON.stringify(items, (_key, value) => (value instanceof Uint8Array ? decodeBinary(value) : value));
  }
  return dump;
}

/** The claim-check objects present now (the host's claim-check store lists its keys). */
async function dumpClaimChecks(): Promise<string> {
  const parts: string[] = [];
  for (const key of host.claimCheck.keys()) parts.push(key, await host.claimCheck.get(key));
  return parts.join('\n');
}

const logText = () => `${structured.join('\n')}\n${captured.join('')}`;

interface Markers {
  text: string;
  /** Only inside the attachment's bytes. */
  bytes: string;
}

const newMarkers = (): Markers => ({ text: `mkr${randomBytes(9).toString('hex')}`, bytes: `byt${randomBytes(9).toString('hex')}` });

function requestWithMarkers(m: Markers, extra: Record<string, unknown>): Record<string, unknown> {
  const png = pngWithText(m.bytes).toString('base64');
  return {
    prompt: `Summarise ${m.text} please`,
    models: ['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro'],
    system_prompt: `You are careful about ${m.text}`,
    history: [
      { role: 'user', content: `Earlier question about ${m.text}` },
      { role: 'assistant', content: `Earlier answer about ${m.text}` },
    ],
    attachments: [{ name: `scan-${m.text}.png`, type: 'image/png', base64: png }],
    response_schema: {
      type: 'object',
      description: `Schema for ${m.text}`,
      properties: { answer: { type: 'string', description: `About ${m.text}` } },
      required: ['answer'],
      additionalProperties: false,
    },
    ...extra,
  };
}

const upstream = (id: string) => resolveModel(id)!.upstreamModel;

/** An OpenAI Responses answer whose one message says `text`. */
function responsesAnswer(text: string): unknown {
  return {
    id: 'resp_verdict',
    object: 'response',
    created_at: 1_763_000_000,
    status: 'completed',
    error: null,
    incomplete_details: null,
    model: 'gpt-4.1',
    output: [{ type: 'message', id: 'msg_verdict', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }],
    usage: { input_tokens: 900, input_tokens_details: { cached_tokens: 0 }, output_tokens: 3_000, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 3_900 },
  };
}

/** The places a marker was found, as "where: count". */
function findMarker(haystacks: Record<string, string | undefined>, needles: string[]): string[] {
  const found: string[] = [];
  for (const [where, text] of Object.entries(haystacks)) {
    if (!text) continue;
    for (const needle of needles) if (text.includes(needle)) found.push(`${where} holds "${needle}"`);
  }
  return found;
}

const allForms = (m: Markers) => [m.text, m.bytes, ...base64Forms(m.text), ...base64Forms(m.bytes)];

describe('Zero data retention audit', () => {
  it('builds a real PNG whose bytes hold the marker', () => {
    const png = pngWithText('hello-marker');
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(png.toString('latin1')).toContain('tEXtComment\u0000hello-marker');
    // Each base64 form really is found inside the encoded file.
    expect(base64Forms('hello-marker').some((form) => png.toString('base64').includes(form))).toBe(true);
  });

  it('keeps the marker nowhere: no table, no claim-check object, no log line', async () => {
    const m = newMarkers();
    const answers: Answer[] = [];
    captured.length = 0;
    structured.length = 0;
    // Completed and failed models, with and without an Idempotency-Key, the block form of the system prompt.
    host.simulator.setFault({ kind: 'status', status: 500, provider: 'anthropic', times: 3 });
    answers.push(await post(host, requestWithMarkers(m, { zero_data_retention: true })));
    answers.push(await post(host, requestWithMarkers(m, { zero_data_retention: true }), { 'idempotency-key': `zdr-${m.text}` }));
    answers.push(await post(host, requestWithMarkers(m, { zero_data_retention: true }), { 'idempotency-key': `zdr-${m.text}` }));
    answers.push(
      await post(
        host,
        requestWithMarkers(m, {
          zero_data_retention: true,
          system_prompt: [{ type: 'text', text: `Block about ${m.text}`, cache_control: { type: 'ephemeral' } }],
          history: [{ role: 'user', content: `History ${m.text}`, cache_control: { type: 'ephemeral' } }],
          models: ['fam_a-opus-4-6', 'fam_g-large'],
        }),
      ),
    );
    // Refused requests carrying the marker leave nothing either.
    answers.push(await post(host, requestWithMarkers(m, { zero_data_retention: true, colour: m.text })));
    // With judges (the local host runs the workflow); once with a prompt too large for a
    // workflow state, so that it travels by claim check. Every object written is counted.
    const claimCheck = host.claimCheck;
    const puts = vi.spyOn(claimCheck, 'put');
    const judgmentPuts = () => puts.mock.calls.filter(([key]) => key.includes('/judgments/')).length;
    const judged = await post(host, requestWithMarkers(m, { zero_data_retention: true, judges: ['fam_c-5.4-mini'], judge_prompt: `Judge ${m.text}` }));
    answers.push(judged);
    const putsBeforeLarge = puts.mock.calls.length;
    const bigPrompt = `${'Context paragraph. '.repeat(16_000)} Then summarise ${m.text}.`;
    const judgedLarge = await post(
      host,
      requestWithMarkers(m, { zero_data_retention: true, prompt: bigPrompt, models: ['fam_c-5.4', 'fam_b-3.1-pro'], judges: ['fam_c-5.4-mini'], judge_prompt: `Judge ${m.text}` }),
    );
    answers.push(judgedLarge);
    const largePromptPuts = puts.mock.calls.length - putsBeforeLarge;
    const judgmentsBeforeVerdict = judgmentPuts();
    // A judge whose verdict is too large for a workflow state: its judgment, reasoning and all, travels by claim check.
    // 3 judges x 6 models: 90 judge calls share 64 KiB of state, too little for verdicts of the longest reasoning kept (1,000 characters).
    const verdict = { reasoning: `Weighing both answers about ${m.text}. `.repeat(100), scoreA: 6, scoreB: 7, winner: 'B' };
    const judges = ['fam_c-5.4-mini', 'fam_c-5.4-nano', 'fam_c-5.4-pro'];
    for (const judge of judges) host.simulator.setFault({ kind: 'status', status: 200, model: upstream(judge), body: responsesAnswer(JSON.stringify(verdict)) });
    const contestants = ['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro', 'fam_g-large', 'fam_h-pro', 'fam_d-4.3'];
    const judgedVerdict = await post(host, requestWithMarkers(m, { zero_data_retention: true, models: contestants, judges }));
    answers.push(judgedVerdict);
    expect(judgedVerdict.status).toBe(200);
    expect(judgedVerdict.body.evaluations.filter((e: { status: string }) => e.status === 'completed')).toHaveLength(45);
    expect(judgmentPuts() - judgmentsBeforeVerdict).toBe(90);

    // Streamed (Accept: text/event-stream): once to its end, once disconnected after the first event (its calls cancelled).
    const streamed = await postEvents(host, requestWithMarkers(m, { zero_data_retention: true }));
    expect(streamed.events.at(-1)!.event).toBe('done');
    const disconnected = await postEvents(host, requestWithMarkers(m, { zero_data_retention: true }), { stopAfter: () => true });
    expect(disconnected.events.map((e) => e.event)).not.toContain('done');

    expect(answers.map((a) => a.status)).toEqual([200, 200, 409, 200, 400, 200, 200, 200]);
    for (const answer of [judged, judgedLarge]) expect(answer.body.evaluations.filter((e: { status: string }) => e.status === 'completed').length).toBeGreaterThan(0);
    // The large prompt travelled by claim check; claim-check objects live only while their request runs.
    expect(largePromptPuts).toBeGreaterThan(0);
    expect(claimCheck.keys()).toEqual([]);
    expect(answers[0]!.body.results.map((r: any) => r.status)).toEqual(['completed', 'failed', 'completed']);
    // The retry under zero data retention has no stored response to replay.
    expect(answers[2]!.body.error.code).toBe('response_not_retained');
    // The logs were captured (the audit would pass vacuously otherwise).
    expect(structured.some((line) => line.includes('Prompt completed'))).toBe(true);
    expect(captured.join('')).toContain(`"service":"${AUDIT_SERVICE}"`);

    const found = findMarker({ ...(await dumpStore()), claimChecks: await dumpClaimChecks(), logs: logText() }, allForms(m));
    expect(found).toEqual([]);
    console.log(
      `[privacy] zero data retention: ${answers.length} requests (judges run; ${puts.mock.calls.length} claim-check objects written, 0 left), ` +
        `${Object.keys(host.gateway.config.tables).length} tables, ${structured.length} log records and ${captured.length} stdout/stderr writes scanned; markers found: ${found.length}`,
    );
  });

  it('without the flag keeps the marker in the prompt log only, and attachment bytes nowhere', async () => {
    const m = newMarkers();
    captured.length = 0;
    structured.length = 0;
    host.simulator.reset();
    const plain = await post(host, requestWithMarkers(m, { zero_data_retention: false, judges: ['fam_c-5.4-mini'], judge_prompt: `Judge ${m.text}` }));
    const keyed = await post(host, requestWithMarkers(m, { zero_data_retention: false }), { 'idempotency-key': `plain-${m.text}` });
    expect([plain.status, keyed.status]).toEqual([200, 200]);

    const store = await dumpStore();
    const { promptLogs, ...otherTables } = store;
    // The prompt log holds the content of both requests…
    for (const answer of [plain, keyed]) {
      const log = await host.gateway.promptLogs.get(answer.body.promptLogId);
      expect(log?.content?.prompt).toContain(m.text);
      expect(JSON.stringify(log?.content?.systemPrompt)).toContain(m.text);
      expect(JSON.stringify(log?.content?.history)).toContain(m.text);
      expect(log?.content?.attachments).toEqual([{ name: `scan-${m.text}.png`, type: 'image/png', bytes: expect.any(Number) }]);
    }
    expect(plain.body.evaluations.length).toBeGreaterThan(0);
    expect((await host.gateway.promptLogs.get(plain.body.promptLogId))?.content?.judgePrompt).toContain(m.text);
    expect(promptLogs).toContain(m.text);
    // …and nothing else does: no other table, no log line.
    expect(findMarker({ ...otherTables, claimChecks: await dumpClaimChecks(), logs: logText() }, [m.text, ...base64Forms(m.text)])).toEqual([]);
    // The attachment's bytes are stored nowhere, not even in the prompt log.
    expect(findMarker({ ...store, logs: logText() }, [m.bytes, ...base64Forms(m.bytes)])).toEqual([]);
    // The idempotency record keeps the response (the outputs, for retries), never the request.
    const outputs = keyed.body.results.map((r: any) => r.output as string);
    for (const output of outputs) expect(store.idempotency).toContain(JSON.stringify(output).slice(1, -1));
    expect(store.idempotency).not.toContain(m.text);
  });
});
