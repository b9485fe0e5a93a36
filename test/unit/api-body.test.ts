import type { IncomingMessage } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { createApiHandler } from '../../functions/api-handler.js';
import { lambdaContext, toProxyEvent } from '../../infra/local/lambda-events.js';
import { MAX_FIELDS, REPEATED_MEMBER, TOO_MANY_FIELDS } from '../../shared/contract/json-fields.js';
import { LIMITS } from '../../shared/contract/limits.js';
import type { Gateway } from '../../shared/gateway.js';
import { refusedCharset } from '../../shared/http/middleware.js';
import { silentLog } from '../../shared/log.js';

/**
 * The api handler's own body checks (Middy's JSON body parser and what runs before it),
 * reached directly: the local server's size check never sees these events.
 */
const AUTHORIZER_CONTEXT = { accountId: 'acct_1', zeroDataRetention: 'false', rateLimitRpm: '0' };

/** Marks a request that passed every body check: the handler went on to build the gateway. */
class GatewayReached extends Error {}

async function invoke(body: string | Buffer, rawHeaders: string[] = ['content-type', 'application/json']) {
  let reached = false;
  const gateway = (): Gateway => {
    reached = true;
    throw new GatewayReached();
  };
  const req = { method: 'POST', url: '/api/v1/prompt', rawHeaders, headers: {} } as unknown as IncomingMessage;
  const event = toProxyEvent(req, body, '/api/v1/prompt', AUTHORIZER_CONTEXT, 'req-1');
  const result = await createApiHandler(gateway, silentLog)(event, lambdaContext('api'));
  return { status: result.statusCode, body: JSON.parse(result.body), reached, event };
}

/**
 * A valid request whose JSON text is exactly `bytes` bytes of UTF-8, most of them in
 * three-byte characters: far fewer characters than bytes.
 */
function requestOfBytes(bytes: number): string {
  const turns = Array.from({ length: 4 }, () => ({ role: 'user', content: '€'.repeat(436_000) }));
  const make = (pad: number) => JSON.stringify({ prompt: 'x', models: ['fam_k-8b'], history: [...turns, { role: 'assistant', content: 'a'.repeat(pad) }] });
  const text = make(bytes - Buffer.byteLength(make(0), 'utf8'));
  expect(Buffer.byteLength(text, 'utf8')).toBe(bytes);
  expect(text.length).toBeLessThan(LIMITS.bodyBytes / 2);
  return text;
}

describe('Handler: api, request bodies', () => {
  it('answers 413 for a body one byte over the limit in bytes, though far under it in characters', async () => {
    const answer = await invoke(requestOfBytes(LIMITS.bodyBytes + 1));
    expect(answer.status).toBe(413);
    expect(answer.body.error.code).toBe('payload_too_large');
    expect(answer.reached).toBe(false);
  });

  it('takes a body of exactly the limit in bytes past every body check', async () => {
    const answer = await invoke(requestOfBytes(LIMITS.bodyBytes));
    expect(answer.reached).toBe(true);
    expect(answer.status).toBe(503);
  });

  it('counts a base64 body by its decoded bytes', async () => {
    const over = Buffer.concat([Buffer.from(requestOfBytes(LIMITS.bodyBytes + 1)), Buffer.from([0xff])]);
    const answer = await invoke(over);
    expect(answer.event.isBase64Encoded).toBe(true);
    expect(answer.status).toBe(413);
  });

  it('answers 400 malformed_json for valid JSON that is not valid UTF-8 (RFC 8259)', async () => {
    const latin1 = Buffer.from('{"prompt":"caf\u00e9","models":["fam_k-8b"]}', 'latin1');
    const answer = await invoke(latin1);
    expect(answer.event.isBase64Encoded).toBe(true);
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('malformed_json');
    expect(answer.reached).toBe(false);
    // The same text in UTF-8 is a request.
    expect((await invoke(Buffer.from('{"prompt":"caf\u00e9","models":["fam_k-8b"]}', 'utf8'))).reached).toBe(true);
  });

  it.each([
    ['text that is not JSON', '{"prompt": "x", '],
    ['no body', ''],
    ['a lone JSON value with trailing text', '{} {}'],
  ])('maps the body parser refusing %s to 400 malformed_json', async (_name, text) => {
    const answer = await invoke(text);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'malformed_json', message: 'The request body is not valid JSON' });
  });

  it.each([
    ['2.6 million nested arrays', `{"prompt":"hi","models":["fam_k-8b"],"x":${'['.repeat(2_600_000)}${']'.repeat(2_600_000)}}`],
    ['400,000 keys', `{"prompt":"hi","models":["fam_k-8b"],${Array.from({ length: 400_000 }, (_, i) => `"k${i}":0`).join(',')}}`],
    ['a million empty objects', `{"prompt":"hi","models":["fam_k-8b"],"x":[${'{},'.repeat(1_000_000)}{}]}`],
  ])('refuses a body of %s by its field cap before anything parses it', async (_name, text) => {
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const answer = await invoke(text);
      expect(answer.status).toBe(400);
      expect(answer.body.error.details).toEqual([{ field: '', message: TOO_MANY_FIELDS }]);
      expect(parse.mock.calls.filter(([parsed]) => parsed === text)).toEqual([]);
    } finally {
      parse.mockRestore();
    }
  });

  it('parses a body of exactly the field cap, its strings holding escaped quotes, commas and brackets', async () => {
    const models = Array.from({ length: 3 }, () => 'fam_k-8b');
    const fields = (extra: number) => `{"prompt":"a \\" , [ { \\\\","models":${JSON.stringify(models)},"x":[${Array.from({ length: extra }, () => '0').join(',')}]}`;
    // prompt, models and its 3 elements, x: 6 fields besides x's elements.
    const atCap = fields(MAX_FIELDS - 6);
    expect(JSON.parse(atCap)).toBeTypeOf('object');
    expect((await invoke(atCap)).body.error.details).not.toEqual([{ field: '', message: TOO_MANY_FIELDS }]);
    expect((await invoke(fields(MAX_FIELDS - 5))).body.error.details).toEqual([{ field: '', message: TOO_MANY_FIELDS }]);
  });

  it.each([
    ['the same spelling', '{"prompt":"hi","models":["nope"],"models":["fam_k-8b"]}', ['/models']],
    ['an escaped spelling', '{"prompt":"hi","\\u006dodels":["nope"],"models":["fam_k-8b"]}', ['/models']],
    ['a nested object', '{"prompt":"hi","models":["fam_k-8b"],"history":[{"role":"user","content":"a","role":"assistant"}]}', ['/history/0/role']],
    ['two names', '{"prompt":"hi","models":["fam_k-8b"],"prompt":"again","models":["fam_k-8b"]}', ['/prompt', '/models']],
  ])('answers 400 naming the member for a name repeated in an object (%s): JSON.parse keeps the last, a proxy may read the first', async (_name, text, fields) => {
    const answer = await invoke(text);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'invalid_request', details: fields.map((field) => ({ field, message: REPEATED_MEMBER })) });
    expect(answer.reached).toBe(false);
  });

  it('answers 400 to a model_tuning key of megabytes over a thousand parameters, naming the key once', async () => {
    const params = Array.from({ length: 1_000 }, (_, i) => `"p${i}":0`).join(',');
    const text = `{"prompt":"hi","models":["fam_k-8b"],"model_tuning":{"${'k'.repeat(4_000_000)}":{${params}}}}`;
    // Every error below the key was listed with a copy of it: the process ran out of memory.
    const answer = await invoke(text);
    expect(answer.status).toBe(400);
    expect(answer.body.error.details).toHaveLength(1);
    expect(answer.reached).toBe(false);
  });

  it('answers a body that is not JSON as malformed, and one over the field cap as that, whatever names it repeats', async () => {
    expect((await invoke('{"prompt":"hi","prompt":"hi"')).body.error.code).toBe('malformed_json');
    const over = `{"prompt":"hi","prompt":"hi","models":["fam_k-8b"],"x":[${Array.from({ length: MAX_FIELDS }, () => '0').join(',')}]}`;
    expect((await invoke(over)).body.error.details).toEqual([{ field: '', message: TOO_MANY_FIELDS }]);
  });

  it('keeps the answer to repeated members under a name of megabytes within twice the body (the one pointer, in the message and in details)', async () => {
    const pairs = Array.from({ length: 1_000 }, (_, i) => `"m${i}":0,"m${i}":1`).join(',');
    const text = `{"prompt":"hi","models":["fam_k-8b"],"model_tuning":{"${'k'.repeat(4_000_000)}":{${pairs}}}}`;
    const answer = await invoke(text);
    expect(answer.status).toBe(400);
    expect(answer.body.error.details).toHaveLength(1);
    // Counted whole, though one is listed: it had said "1 field", as the list was cut.
    expect(answer.body.error.message).toBe('1000 fields are invalid; the first is listed');
    expect(JSON.stringify(answer.body).length).toBeLessThan(2 * text.length + 1_000);
  });

  it('counts every repeated member in its message where their pointers fill the list before its 100', async () => {
    const names = Array.from({ length: 2_000 }, (_, i) => String(i).padStart(60, 'k'));
    const answer = await invoke(`{"prompt":"a","models":["fam_k-8b"],"x":{${names.map((name) => `"${name}":1,"${name}":2`).join(',')}}}`);
    expect(answer.body.error.details).toHaveLength(100);
    expect(answer.body.error.message).toBe('2000 fields are invalid; the first 100 are listed');
    // A malformed Idempotency-Key adds one more: counted on top of them all, not of the pointers kept.
    const keyed = await invoke(`{"prompt":"a","models":["fam_k-8b"],"x":{${names.map((name) => `"${name}":1,"${name}":2`).join(',')}}}`, [
      'content-type',
      'application/json',
      'idempotency-key',
      'bad key with spaces',
    ]);
    expect(keyed.body.error.message).toBe('2001 fields are invalid; the first 100 are listed');
    const long = ['a', 'b', 'c'].map((letter) => letter.repeat(30_000));
    const three = await invoke(`{"prompt":"a","models":["fam_k-8b"],"x":{${long.map((name) => `"${name}":1,"${name}":2`).join(',')}}}`);
    expect(three.body.error.details).toHaveLength(2);
    expect(three.body.error.message).toBe('3 fields are invalid; the first 2 are listed');
  });

  it.each([
    ['application/json; charset=utf-8', true],
    ['application/json;charset=UTF-8', true],
    ['application/json; charset="utf-8"', true],
    ['application/json; CHARSET=Utf-8 ', true],
    ['application/json; charset=utf8', true],
    ['application/json; version=2; charset=utf-8', true],
    ['application/json; x="a;charset=latin1"; charset=utf-8', true],
    ['application/json; charset', true],
    ['application/problem+json', true],
    ['application/problem+json; charset=utf-8', true],
    ['application/x-www-form-urlencoded', true],
    ['application/x-www-form-urlencoded; charset=UTF-8', true],
    ['text/plain', false],
  ])('takes Content-Type %s as JSON: %s', async (contentType, accepted) => {
    const answer = await invoke('{"prompt":"x","models":["fam_k-8b"]}', ['Content-Type', contentType]);
    expect(answer.reached).toBe(accepted);
    if (!accepted) {
      expect(answer.status).toBe(415);
      expect(answer.body.error).toMatchObject({ code: 'unsupported_media_type', details: [{ field: 'header:Content-Type', message: 'must be application/json' }] });
    }
  });

  it('takes a body with no Content-Type at all as JSON', async () => {
    expect((await invoke('{"prompt":"x","models":["fam_k-8b"]}', [])).reached).toBe(true);
  });

  it.each([
    ['application/json; charset=utf-16', 'utf-16'],
    ['application/json; charset=UTF-16LE', 'UTF-16LE'],
    ['application/json; charset=latin1', 'latin1'],
    ['application/json;charset="ISO-8859-1"', 'ISO-8859-1'],
    ['application/json; charset="utf\\-16"', 'utf-16'],
    ['application/json; charset=utf-8; charset=utf-16', 'utf-16'],
    ['application/json; charset=', ''],
    ['application/problem+json; charset=us-ascii', 'us-ascii'],
    ['application/x-www-form-urlencoded; charset=windows-1252', 'windows-1252'],
  ])('answers 415 naming the header for Content-Type %s: JSON is UTF-8 (RFC 8259)', async (contentType, charset) => {
    // Valid UTF-8 JSON all the same: the declared charset alone refuses it, before any parse.
    const answer = await invoke('{"prompt":"x","models":["fam_k-8b"]}', ['Content-Type', contentType]);
    expect(answer.reached).toBe(false);
    expect(answer.status).toBe(415);
    expect(answer.body.error).toEqual({
      code: 'unsupported_media_type',
      message: `Content-Type "${contentType}" is not accepted; send application/json`,
      details: [{ field: 'header:Content-Type', message: `must not declare charset "${charset}": a JSON body is UTF-8 (RFC 8259); send charset=utf-8 or none` }],
    });
  });

  it('reads the parameters of a hostile Content-Type of megabytes in one pass (a scan per parameter would not end within the test)', () => {
    for (const header of [`application/json${';'.repeat(1_000_000)}`, `application/json${'; a'.repeat(300_000)}`, `application/json; x="${'\\;'.repeat(300_000)}`]) {
      expect(refusedCharset(header)).toBeUndefined();
    }
  });
});

describe('Handler: api, headers sent at most once', () => {
  it.each([
    ['the same spelling', ['Idempotency-Key', 'k1', 'Idempotency-Key', 'k2']],
    ['two spellings', ['idempotency-key', 'k1', 'IDEMPOTENCY-KEY', 'k1']],
  ])('answers 400 naming the header for two Idempotency-Key headers in %s', async (_name, headers) => {
    const answer = await invoke('{"prompt":"x","models":["fam_k-8b"]}', ['content-type', 'application/json', ...headers]);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'invalid_request', details: [{ field: 'header:Idempotency-Key', message: 'must be sent at most once' }] });
    expect(answer.reached).toBe(false);
  });

  it('answers 401 for two Authorization headers, by the same mechanism', async () => {
    const answer = await invoke('{"prompt":"x","models":["fam_k-8b"]}', ['content-type', 'application/json', 'Authorization', 'Bearer a', 'authorization', 'Bearer b']);
    expect(answer.status).toBe(401);
    expect(answer.reached).toBe(false);
  });

  it.each([
    ['the same spelling', ['Content-Type', 'application/json', 'Content-Type', 'text/plain']],
    ['two spellings', ['content-type', 'application/json', 'CONTENT-TYPE', 'application/json']],
  ])('answers 415 naming the header for two Content-Type headers in %s, by the same mechanism', async (_name, headers) => {
    const answer = await invoke('{"prompt":"x","models":["fam_k-8b"]}', headers);
    expect(answer.status).toBe(415);
    expect(answer.body.error).toMatchObject({ code: 'unsupported_media_type', details: [{ field: 'header:Content-Type', message: 'must be sent at most once' }] });
    expect(answer.reached).toBe(false);
  });

  it.each(['gzip', 'identity, br', 'x-custom'])('answers 415 naming the header for Content-Encoding: %s', async (coding) => {
    const answer = await invoke('{"prompt":"x","models":["fam_k-8b"]}', ['content-type', 'application/json', 'Content-Encoding', coding]);
    expect(answer.status).toBe(415);
    expect(answer.body.error).toMatchObject({ code: 'unsupported_media_type', details: [{ field: 'header:Content-Encoding' }] });
    expect(answer.body.error.message).toMatch(/^Content-Encoding "/);
    expect(answer.reached).toBe(false);
  });

  it('answers 415 to two Content-Encoding headers, gzip then identity: the last would have passed a gzip body as identity', async () => {
    const answer = await invoke('{"prompt":"x","models":["fam_k-8b"]}', ['content-type', 'application/json', 'Content-Encoding', 'gzip', 'Content-Encoding', 'identity']);
    expect(answer.status).toBe(415);
    expect(answer.body.error).toMatchObject({ code: 'unsupported_media_type', details: [{ field: 'header:Content-Encoding', message: 'must be sent at most once' }] });
    expect(answer.reached).toBe(false);
  });

  it('takes Content-Encoding: identity', async () => {
    expect((await invoke('{"prompt":"x","models":["fam_k-8b"]}', ['content-type', 'application/json', 'Content-Encoding', 'identity'])).reached).toBe(true);
  });

  it('takes one Idempotency-Key', async () => {
    expect((await invoke('{"prompt":"x","models":["fam_k-8b"]}', ['content-type', 'application/json', 'Idempotency-Key', 'k1'])).reached).toBe(true);
  });
});
