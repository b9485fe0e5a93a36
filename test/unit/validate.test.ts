import { LIMITS } from '../../shared/contract/limits.js';
import { describe, expect, it } from 'vitest';
import { checkPromptRequest, validatePromptRequest } from '../../shared/contract/validate.js';
import { ValidationError } from '../../shared/errors.js';
import { PDF_BASE64, PNG_BASE64, body } from '../support/fixtures.js';

/** The fields the whole request check refuses: the synchronous one, then the response_schema's compile on the schema thread. */
async function fieldErrors(input: unknown): Promise<{ field: string; message: string }[]> {
  try {
    await checkPromptRequest(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).details;
  }
  throw new Error('expected a ValidationError');
}

const strictSchema = {
  type: 'object',
  properties: { answer: { type: 'string' }, score: { type: 'object', properties: { value: { type: 'number' } }, additionalProperties: false } },
  required: ['answer'],
  additionalProperties: false,
};

describe('Function: validatePromptRequest', () => {
  it.each([
    ['500,000 ASCII characters', 'x'.repeat(500_000), true],
    ['500,001 ASCII characters', 'x'.repeat(500_001), false],
    ['500,000 characters outside the BMP (1,000,000 UTF-16 units)', '😀'.repeat(500_000), true],
    ['500,001 characters outside the BMP', '😀'.repeat(500_001), false],
    ['499,999 ASCII characters and one outside the BMP', `${'x'.repeat(499_999)}😀`, true],
    ['500,000 CJK characters', '中'.repeat(500_000), true],
    ['500,000 ASCII characters and a lone high surrogate', `${'x'.repeat(500_000)}\ud800`, false],
  ])('counts a prompt of %s in code points against its 500,000', (_name, prompt, fits) => {
    const check = () => validatePromptRequest(body({ prompt }));
    if (fits) expect(check).not.toThrow();
    else expect(check).toThrow(/more than 500000 characters/);
  });

  describe('rejects with 400 naming the field', () => {
    it.each<[string, unknown, string, RegExp]>([
      ['a missing prompt', { models: ['fam_c-5.4'] }, '/prompt', /required/],
      ['an empty prompt', body({ prompt: '' }), '/prompt', /fewer than 1/],
      ['a prompt that is not a string', body({ prompt: 42 }), '/prompt', /must be string/],
      ['missing models', { prompt: 'x' }, '/models', /required/],
      ['an empty models list', body({ models: [] }), '/models', /fewer than 1/],
      ['models that is not an array', body({ models: 'fam_c-5.4' }), '/models', /must be array/],
      ['more than 32 models', body({ models: Array.from({ length: 33 }, () => 'fam_c-5.4') }), '/models', /more than 32/],
      ['an unknown model ID', body({ models: ['fam_c-5.4', 'gpt-9000'] }), '/models/1', /unknown model ID "gpt-9000"/],
      ['a repeated model ID', body({ models: ['fam_c-5.4', 'fam_c-5.4'] }), '/models/1', /same model as \/models\/0/],
      ['a model named twice by alias', body({ models: ['fam_a-opus-4-6', 'claude-opus-4-6'] }), '/models/1', /same model/],
      ['an unknown judge', body({ judges: ['nobody'] }), '/judges/0', /unknown model ID/],
      ['more than 4 judges', body({ judges: ['fam_c-4.1', 'fam_c-5', 'o3', 'fam_f-v4-pro', 'fam_b-3.1-pro'] }), '/judges', /more than 4/],
      ['an unknown top-level field', body({ stream: true }), '/stream', /not a known field/],
      ['an unknown generation setting', body({ generation_settings: { max_tokens: 5 } }), '/generation_settings/max_tokens', /not a known field/],
      ['temperature above 2', body({ generation_settings: { temperature: 2.1 } }), '/generation_settings/temperature', /<= 2/],
      ['temperature below 0', body({ generation_settings: { temperature: -0.1 } }), '/generation_settings/temperature', /> ?= 0/],
      ['a fractional maxTokens', body({ generation_settings: { maxTokens: 1.5 } }), '/generation_settings/maxTokens', /integer/],
      ['maxTokens of 0', body({ generation_settings: { maxTokens: 0 } }), '/generation_settings/maxTokens', /> ?= 1/],
      ['topP above 1', body({ generation_settings: { topP: 1.01 } }), '/generation_settings/topP', /<= 1/],
      ['a judge weight above 1', body({ judge_weights: { accuracy: 1.5 } }), '/judge_weights/accuracy', /<= 1/],
      ['a negative judge weight', body({ judge_weights: { cost: -0.5 } }), '/judge_weights/cost', /> ?= 0/],
      ['an unknown judge weight', body({ judge_weights: { style: 1 } }), '/judge_weights/style', /not a known field/],
      ['a history role other than user/assistant', body({ history: [{ role: 'system', content: 'x' }] }), '/history/0/role', /user, assistant/],
      ['a history turn without content', body({ history: [{ role: 'user' }] }), '/history/0/content', /required/],
      ['an unknown history field', body({ history: [{ role: 'user', content: 'x', name: 'bob' }] }), '/history/0/name', /not a known field/],
      ['a system prompt of the wrong type', body({ system_prompt: 7 }), '/system_prompt', /string or array/],
      ['a system block of another type', body({ system_prompt: [{ type: 'image', text: 'x' }] }), '/system_prompt/0/type', /"text"/],
      [
        'a cache_control of another type',
        body({ system_prompt: [{ type: 'text', text: 'x', cache_control: { type: 'persistent' } }] }),
        '/system_prompt/0/cache_control/type',
        /"ephemeral"/,
      ],
      [
        'an unknown cache_control field',
        body({ history: [{ role: 'user', content: 'x', cache_control: { type: 'ephemeral', ttl: '1h' } }] }),
        '/history/0/cache_control/ttl',
        /not a known field/,
      ],
      [
        'five cache breakpoints',
        body({
          system_prompt: [1, 2, 3].map((i) => ({ type: 'text', text: `s${i}`, cache_control: { type: 'ephemeral' } })),
          history: [
            { role: 'user', content: 'a', cache_control: { type: 'ephemeral' } },
            { role: 'assistant', content: 'b', cache_control: { type: 'ephemeral' } },
          ],
        }),
        '/history/1/cache_control',
        /at most 4/,
      ],
      ['zero_data_retention as a string', body({ zero_data_retention: 'true' }), '/zero_data_retention', /boolean/],
      ['tuning for a model not requested', body({ model_tuning: { 'fam_c-5': { reasoningEffort: 'low' } } }), '/model_tuning/fam_c-5', /not one of the requested/],
      ['tuning for an unknown model', body({ model_tuning: { 'gpt-9000': { reasoningEffort: 'low' } } }), '/model_tuning/gpt-9000', /unknown model ID/],
      [
        'a parameter the model does not take',
        body({ model_tuning: { 'fam_c-5.4': { thinkingBudget: 2048 } } }),
        '/model_tuning/fam_c-5.4/thinkingBudget',
        /does not accept thinkingBudget/,
      ],
      ['an unknown tuning parameter', body({ model_tuning: { 'fam_c-5.4': { verbosity: 'low' } } }), '/model_tuning/fam_c-5.4/verbosity', /not a known field/],
      [
        'a fam_a thinking budget below 1024',
        body({ model_tuning: { 'fam_a-opus-4-6': { thinkingBudget: 1000 } } }),
        '/model_tuning/fam_a-opus-4-6/thinkingBudget',
        /0 \(disabled\) or 1024 to 32000/,
      ],
      [
        'a fam_a thinking budget above 32000',
        body({ model_tuning: { 'fam_a-opus-4-6': { thinkingBudget: 32001 } } }),
        '/model_tuning/fam_a-opus-4-6/thinkingBudget',
        /1024 to 32000/,
      ],
      [
        'a fam_b thinking budget above 24576',
        body({ model_tuning: { 'fam_b-3.1-pro': { thinkingBudget: 24577 } } }),
        '/model_tuning/fam_b-3.1-pro/thinkingBudget',
        /^must be 0 to 24576 for fam_b-3.1-pro$/,
      ],
      ['a negative thinking budget', body({ model_tuning: { 'fam_b-3.1-pro': { thinkingBudget: -1 } } }), '/model_tuning/fam_b-3.1-pro/thinkingBudget', /> ?= 0/],
      ['reasoningEffort none for fam_c', body({ model_tuning: { 'fam_c-5.4': { reasoningEffort: 'none' } } }), '/model_tuning/fam_c-5.4/reasoningEffort', /low, medium, high/],
      // The values this model takes, not every model's (`none` would then be refused in turn).
      [
        'an unknown reasoningEffort',
        body({ model_tuning: { 'fam_c-5.4': { reasoningEffort: 'max' } } }),
        '/model_tuning/fam_c-5.4/reasoningEffort',
        /^must be one of low, medium, high for fam_c-5.4$/,
      ],
      ['webSearch that is not boolean', body({ model_tuning: { 'fam_b-3.1-pro': { webSearch: 'yes' } } }), '/model_tuning/fam_b-3.1-pro/webSearch', /boolean/],
      ['a malformed cachedContent', body({ model_tuning: { 'fam_b-3.1-pro': { cachedContent: 'caches/abc' } } }), '/model_tuning/fam_b-3.1-pro/cachedContent', /pattern/],
      ['tuning for a fam_h model', body({ models: ['fam_h-pro'], model_tuning: { 'fam_h-pro': {} } }), '/model_tuning/fam_h-pro', /takes no tuning/],
      ['tuning for a fam_g model', body({ models: ['fam_g-large'], model_tuning: { 'fam_g-large': { reasoningEffort: 'low' } } }), '/model_tuning/fam_g-large', /takes no tuning/],
      [
        'a response schema without additionalProperties',
        body({ response_schema: { type: 'object', properties: { a: { type: 'string' } } } }),
        '/response_schema/additionalProperties',
        /must be false/,
      ],
      [
        'a nested schema object without additionalProperties',
        body({ response_schema: { ...strictSchema, properties: { inner: { type: 'object', properties: {} } } } }),
        '/response_schema/properties/inner/additionalProperties',
        /must be false/,
      ],
      [
        'an array item object without additionalProperties',
        body({ response_schema: { type: 'object', properties: { list: { type: 'array', items: { type: 'object', properties: {} } } }, additionalProperties: false } }),
        '/response_schema/properties/list/items/additionalProperties',
        /must be false/,
      ],
      [
        'a subschema that lists properties without saying type object, without additionalProperties',
        body({ response_schema: { ...strictSchema, properties: { inner: { patternProperties: { '^x': { type: 'string' } } } }, required: ['inner'] } }),
        '/response_schema/properties/inner/additionalProperties',
        /must be false/,
      ],
      [
        'a subschema whose additionalProperties is a schema, not false',
        body({ response_schema: { ...strictSchema, properties: { tags: { additionalProperties: { type: 'string' } } }, required: ['tags'] } }),
        '/response_schema/properties/tags/additionalProperties',
        /must be false/,
      ],
      ['a response schema whose root is not an object', body({ response_schema: { type: 'array', items: { type: 'string' } } }), '/response_schema/type', /root/],
      [
        'a response schema that does not compile',
        body({ response_schema: { type: 'object', properties: { a: { type: 'strin' } }, additionalProperties: false } }),
        '/response_schema',
        /not a valid JSON Schema/,
      ],
      ['an attachment type outside the contract', body({ attachments: [{ name: 'a.tiff', type: 'image/tiff', base64: PNG_BASE64 }] }), '/attachments/0/type', /one of/],
      ['an attachment missing its content', body({ attachments: [{ name: 'a.png', type: 'image/png' }] }), '/attachments/0/base64', /required/],
      ['invalid base64', body({ attachments: [{ name: 'a.png', type: 'image/png', base64: 'not base64!' }] }), '/attachments/0/base64', /not valid base64/],
      [
        'a data URL instead of base64',
        body({ attachments: [{ name: 'a.png', type: 'image/png', base64: `data:image/png;base64,${PNG_BASE64}` }] }),
        '/attachments/0/base64',
        /data: URL/,
      ],
      [
        'content that is not the declared type',
        body({ attachments: [{ name: 'a.png', type: 'image/png', base64: PDF_BASE64 }] }),
        '/attachments/0/base64',
        /does not hold image\/png/,
      ],
      [
        'a PDF for a model that takes none',
        body({ models: ['fam_c-5.4', 'fam_h-micro'], attachments: [{ name: 'a.pdf', type: 'application/pdf', base64: PDF_BASE64 }] }),
        '/attachments/0/type',
        /not supported by fam_h-micro$/,
      ],
      [
        'six PDFs for Nova, whose Converse call takes five documents at most',
        body({
          models: ['fam_c-5.4', 'fam_h-pro', 'fam_h-lite'],
          attachments: Array.from({ length: 6 }, (_, i) => ({ name: `${i}.pdf`, type: 'application/pdf', base64: PDF_BASE64 })),
        }),
        '/attachments',
        /^holds 6 PDFs: their vendors take fewer in one call \(fam_h-pro at most 5, fam_h-lite at most 5\)$/,
      ],
      [
        'a PDF for a retired ID whose own model took none either: no word of its successor',
        body({ models: ['fam_i-3.3-70b'], attachments: [{ name: 'a.pdf', type: 'application/pdf', base64: PDF_BASE64 }] }),
        '/attachments/0/type',
        /^application\/pdf is not supported by fam_i-3\.3-70b$/,
      ],
      [
        'an image for a retired ID whose successor takes none',
        body({ models: ['fam_i-4-scout'], attachments: [{ name: 'a.png', type: 'image/png', base64: PNG_BASE64 }] }),
        '/attachments/0/type',
        /^image\/png is not supported by fam_i-4-scout \(fam_i-4-scout: Groq shut meta-llama\/llama-4-scout-17b-16e-instruct down on 2026-07-17; openai\/gpt-oss-120b \(fam_i-gpt-oss-120b\) answers this ID in its place, at its prices\)$/,
      ],
      ['a prompt of whitespace only', body({ prompt: ' \n\t ' }), '/prompt', /non-whitespace text/],
      // Whitespace to Unicode and to Python's str.strip (vendors' servers), not to JavaScript's \s: it went to every model.
      ['a prompt of NEL and information separators only', body({ prompt: '\u0085 \u001c\u001d\u001e\u001f' }), '/prompt', /^must contain non-whitespace text$/],
      ['an empty judge prompt', body({ judges: ['fam_c-4.1'], judge_prompt: '' }), '/judge_prompt', /fewer than 1/],
      ['a judge prompt of whitespace only', body({ judges: ['fam_c-4.1'], judge_prompt: '   ' }), '/judge_prompt', /^must contain non-whitespace text$/],
      ['a judge prompt of other whitespace only', body({ judges: ['fam_c-4.1'], judge_prompt: '\n\t\u00a0\u2003' }), '/judge_prompt', /^must contain non-whitespace text$/],
      ['an empty history turn', body({ history: [{ role: 'user', content: '' }] }), '/history/0/content', /non-whitespace text/],
      [
        'a history turn of whitespace only',
        body({
          history: [
            { role: 'user', content: 'Hi' },
            { role: 'assistant', content: '\u00a0 \n' },
          ],
        }),
        '/history/1/content',
        /non-whitespace text/,
      ],
      [
        'a system block of whitespace only',
        body({
          system_prompt: [
            { type: 'text', text: 'Be brief.' },
            { type: 'text', text: '  ' },
          ],
        }),
        '/system_prompt/1/text',
        /non-whitespace text/,
      ],
      [
        'a history that starts with an assistant turn, for Nova, Claude and DeepSeek',
        body({ models: ['fam_c-5.4', 'fam_h-pro', 'claude-opus-4-6', 'fam_f-v4-flash', 'fam_b-3.1-pro'], history: [{ role: 'assistant', content: 'Hello!' }] }),
        '/history/0/role',
        /^must be user for fam_h-pro, claude-opus-4-6, fam_f-v4-flash: Amazon Bedrock \(Nova\), Anthropic, DeepSeek refuse a conversation that starts with an assistant turn$/,
      ],
      [
        'a history that starts with an assistant turn, for Claude alone',
        body({ models: ['fam_c-5.4', 'claude-opus-4-6'], history: [{ role: 'assistant', content: 'Hello!' }] }),
        '/history/0/role',
        /^must be user for claude-opus-4-6: Anthropic refuses a conversation that starts with an assistant turn$/,
      ],
      [
        'too many judge calls',
        body({ models: ['fam_c-5.4', 'fam_c-5', 'fam_c-4.1', 'fam_c-4o', 'o3', 'o4-mini', 'fam_f-v4-pro'], judges: ['fam_c-5.4', 'fam_b-3.1-pro', 'fam_a-opus-4-6'] }),
        '/judges',
        /126 judge calls; the limit is 120/,
      ],
    ])('%s', async (_name, input, field, message) => {
      const errors = await fieldErrors(input);
      const error = errors.find((e) => e.field === field);
      expect(error, JSON.stringify(errors)).toBeDefined();
      expect(error?.message).toMatch(message);
    });

    it('accepts a request at exactly the limit of 120 judge calls (4 judges x 6 models x 5 others)', () => {
      const atLimit = body({
        models: ['fam_c-5.4', 'fam_c-5', 'fam_c-4.1', 'fam_c-4o', 'o3', 'o4-mini'],
        judges: ['fam_c-5.4', 'fam_b-3.1-pro', 'fam_a-opus-4-6', 'fam_f-v4-pro'],
      });
      expect(validatePromptRequest(atLimit).judges).toHaveLength(4);
    });

    it.each([
      ['generation_settings.max_tokens', body({ generation_settings: { max_tokens: 5 } }), '/generation_settings/max_tokens', 'maxTokens'],
      ['model_tuning.<id>.reasoning_effort', body({ model_tuning: { 'fam_c-5.4': { reasoning_effort: 'low' } } }), '/model_tuning/fam_c-5.4/reasoning_effort', 'reasoningEffort'],
      ['systemPrompt at the top level', body({ systemPrompt: 'x' }), '/systemPrompt', 'system_prompt'],
      ['judgeWeights at the top level', body({ judgeWeights: {} }), '/judgeWeights', 'judge_weights'],
      ['a misspelt history field', body({ history: [{ role: 'user', contents: 'x' }] }), '/history/0/contents', 'content'],
    ])('names the field probably meant for %s', async (_name, input, field, meant) => {
      expect(await fieldErrors(input)).toContainEqual({ field, message: `is not a known field; did you mean "${meant}"?` });
    });

    it('refuses a body of more than 5,000 fields before the schema check, with one error', async () => {
      const many = Object.fromEntries(Array.from({ length: 6_000 }, (_, i) => [`field_${i}`, 1]));
      expect(await fieldErrors({ ...body(), ...many })).toEqual([{ field: '', message: 'has more than 5000 fields in all' }]);
      expect(await fieldErrors(body({ history: Array.from({ length: 2_000 }, () => ({ role: 'user', content: 'x' })) }))).toEqual([
        { field: '', message: 'has more than 5000 fields in all' },
      ]);
    });

    it('suggests names for the first 5 unknown names only, and lists at most 100 failing fields', async () => {
      const tuning = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`fam_c-5.${i}`, {}]));
      const suggested = (await fieldErrors(body({ model_tuning: tuning }))).filter((e) => e.message.includes('did you mean'));
      expect(suggested.length).toBeGreaterThan(0);
      expect(suggested.length).toBeLessThanOrEqual(5);
      const many = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`zz${i}`, 1]));
      const error = (() => {
        try {
          validatePromptRequest({ ...body(), ...many });
        } catch (caught) {
          return caught as ValidationError;
        }
        throw new Error('expected a ValidationError');
      })();
      expect(error.details).toHaveLength(100);
      expect(error.message).toBe('300 fields are invalid; the first 100 are listed');
    });

    it('cuts an unknown field named with megabytes to its first 100 characters: the name is not sent back whole', async () => {
      const name = 'n'.repeat(1 << 20);
      const nested = { ...body({}), history: [{ role: 'user', content: 'hi', [name]: 1 }] };
      expect(await fieldErrors(body({ [name]: 1 }))).toEqual([{ field: `/${'n'.repeat(LIMITS.modelIdChars)}…`, message: 'is not a known field' }]);
      expect(await fieldErrors(nested)).toEqual([{ field: `/history/0/${'n'.repeat(LIMITS.modelIdChars)}…`, message: 'is not a known field' }]);
    });

    it('cuts a long name before a character its cut would halve: a lone surrogate is not text, and strict JSON readers refuse it', async () => {
      const name = `${'a'.repeat(LIMITS.modelIdChars - 1)}😀z`;
      const cut = `${'a'.repeat(LIMITS.modelIdChars - 1)}…`;
      expect(await fieldErrors(body({ [name]: 1 }))).toEqual([{ field: `/${cut}`, message: 'is not a known field' }]);
      expect(await fieldErrors(body({ model_tuning: { [name]: {} } }))).toEqual([{ field: `/model_tuning/${cut}`, message: 'is not a valid model ID key' }]);
    });

    it('names no field when none is close', async () => {
      expect(await fieldErrors(body({ colour: 'blue' }))).toContainEqual({ field: '/colour', message: 'is not a known field' });
    });

    it.each([
      ['claude-opus-4.6', '"claude-opus-4-6" (fam_a-opus-4-6)'],
      ['gpt4o', '"gpt-4o" (fam_c-4o)'],
      ['fam_c-54', '"fam_c-5.4"'],
      ['gemini-3.1-pro-preview', '"fam_b-3.1-pro" (for gemini-3.1-pro-preview)'],
      ['us.amazon.nova-pro-v1:0', '"fam_h-pro" (for amazon.nova-pro-v1:0)'],
      ['gpt-oss-120b', '"fam_e-gpt-oss-120b" (for gpt-oss-120b) or "fam_i-gpt-oss-120b" (for openai/gpt-oss-120b)'],
      // An ID whose model its vendor answers with another (servedBy), and a retired one (answered by its successor).
      ['gemini-3-flash-preview', '"fam_b-3.1-flash" (for gemini-3-flash-preview)'],
      ['llama-3.3-70b-versatile', '"fam_i-3.3-70b" (for llama-3.3-70b-versatile until its shutdown; openai/gpt-oss-120b answers it now)'],
      // Its family's IDs, those that begin with it too (another family's had been offered alone: "fam_c-4.1").
      ['fam_b-3.1', '"fam_b-3.1-pro" or "fam_b-3.1-flash" or "fam_b-3.1-flash-lite"'],
    ])('names the closest model IDs for the unknown "%s"', async (id, meant) => {
      const [error] = await fieldErrors(body({ models: [id] }));
      expect(error?.message).toMatch(new RegExp(`^unknown model ID "${id.replace(/[.]/g, '\\.')}"; did you mean .*${meant.replace(/[.()]/g, '\\$&')}`));
    });

    it("offers another family's IDs only where none of the family's own comes close (fam_i-4 had been offered OpenAI's and xAI's)", async () => {
      const [groq] = await fieldErrors(body({ models: ['fam_i-4'] }));
      expect(groq?.message).toBe('unknown model ID "fam_i-4"; did you mean "fam_i-4-scout"?');
    });

    it('suggests nothing for an ID far from every known one', async () => {
      expect(await fieldErrors(body({ models: ['not-a-model'] }))).toEqual([{ field: '/models/0', message: 'unknown model ID "not-a-model"' }]);
    });

    it('rejects a body that is not an object', async () => {
      expect(await fieldErrors([1, 2])).toEqual([{ field: '', message: 'must be object' }]);
    });

    it('lists every failing field at once, in the order of the contract (unknown fields first)', async () => {
      const errors = await fieldErrors({ prompt: 3, models: ['nope'], generation_settings: { temperature: 9 }, extra: 1 });
      expect(errors.map((e) => e.field)).toEqual(['/extra', '/prompt', '/models/0', '/generation_settings/temperature']);
      const semantic = await fieldErrors({ prompt: 'x', models: ['nope', 'fam_c-5.4'], model_tuning: { 'fam_c-5.4': { reasoningEffort: 'none' } } });
      expect(semantic.map((e) => e.field)).toEqual(['/models/0', '/model_tuning/fam_c-5.4/reasoningEffort']);
      // Found after the schema, listed in the contract's order all the same.
      const late = await fieldErrors(body({ prompt: ' ', models: ['nope'], model_tuning: { 'fam_c-5.4': { reasoningEffort: 'none' } } }));
      expect(late.map((e) => e.field)).toEqual(['/prompt', '/models/0', '/model_tuning/fam_c-5.4']);
    });

    it('names the unknown model IDs and judges of a body the schema refuses too, in the order of the contract', async () => {
      const errors = await fieldErrors(JSON.parse('{"prompt":"","models":["nope","fam_c-5.4"],"generation_settings":{"temperature":5,"topP":2},"judges":["x"],"foo":1}'));
      expect(errors.map((e) => e.field)).toEqual(['/foo', '/prompt', '/models/0', '/judges/0', '/generation_settings/temperature', '/generation_settings/topP']);
      const tuned = await fieldErrors(JSON.parse('{"prompt":"hi","models":["nope"],"model_tuning":{"fam_c-5.4":{"reasoningEffort":"x"}},"judges":["y"]}'));
      expect(tuned).toEqual([
        { field: '/models/0', message: 'unknown model ID "nope"' },
        { field: '/judges/0', message: expect.stringMatching(/^unknown model ID "y"/) },
        { field: '/model_tuning/fam_c-5.4/reasoningEffort', message: 'must be one of low, medium, high for fam_c-5.4' },
      ]);
      // A missing prompt is one error, the IDs' the others.
      expect((await fieldErrors({ models: ['nope', 'fam_c-5.4', 'fam_c-5.4'] })).map((e) => e.field)).toEqual(['/prompt', '/models/0', '/models/2']);
    });

    it('runs each rule after the schema only on fields the schema accepted', async () => {
      // Of any other type, or past their limits: the schema's errors alone, and no crash reading them.
      expect(await fieldErrors({ prompt: 'hi', models: 5, judges: 'x' })).toEqual([
        { field: '/models', message: 'must be array' },
        { field: '/judges', message: 'must be array' },
      ]);
      expect((await fieldErrors({ prompt: 'hi', models: [1, 2], judges: [null] })).map((e) => e.field)).toEqual(['/models/0', '/models/1', '/judges/0']);
      expect((await fieldErrors({ prompt: 'hi', models: ['nope', 2] })).map((e) => e.field)).toEqual(['/models/1']);
      expect((await fieldErrors(body({ models: Array.from({ length: 33 }, (_, i) => `nope-${i}`) }))).map((e) => e.field)).toEqual(['/models']);
      expect((await fieldErrors(body({ models: ['x'.repeat(101)], judges: ['nope'] }))).map((e) => e.field)).toEqual(['/models/0', '/judges/0']);
      // An empty prompt is refused by the schema, once; a blank one after it.
      expect(await fieldErrors(body({ prompt: '', extra: 1 }))).toEqual([
        { field: '/extra', message: 'is not a known field' },
        { field: '/prompt', message: 'must NOT have fewer than 1 characters' },
      ]);
      expect((await fieldErrors(body({ prompt: ' ', extra: 1 }))).map((e) => e.field)).toEqual(['/extra', '/prompt']);
      // Tuning is checked against the requested models only when they are known.
      expect((await fieldErrors({ prompt: 'hi', models: 'fam_c-5.4', model_tuning: { 'fam_c-5.4': {} } })).map((e) => e.field)).toEqual(['/models']);
      expect((await fieldErrors({ prompt: 'hi', models: ['fam_c-5.4'], model_tuning: { 'fam_c-5': {} }, history: 5 })).map((e) => e.field)).toEqual([
        '/history',
        '/model_tuning/fam_c-5',
      ]);
      for (const input of [null, 5, 'x', [], [1], { prompt: null, models: null, judges: null, model_tuning: null, history: null, attachments: null }]) {
        expect((await fieldErrors(input)).length).toBeGreaterThan(0);
      }
    });

    it('shares the suggestion budget between the schema errors and the unknown IDs of a refused body', async () => {
      const near = ['claude-opus-4.6', 'gpt4o', 'fam_c-54'];
      // Alone, each ID gets a suggestion.
      expect((await fieldErrors(body({ models: near }))).every((e) => e.message.includes('did you mean'))).toBe(true);
      // Three unknown names spend three of the five: the first two IDs get the rest.
      const errors = await fieldErrors(body({ models: near, judgeWeights: {}, systemPrompt: 'x', max_tokens: 1 }));
      expect(errors.map((e) => e.field)).toEqual(['/judgeWeights', '/systemPrompt', '/max_tokens', '/models/0', '/models/1', '/models/2']);
      expect(errors.filter((e) => e.message.includes('did you mean')).map((e) => e.field)).toEqual(['/judgeWeights', '/systemPrompt', '/models/0', '/models/1']);
      expect(errors[5]).toEqual({ field: '/models/2', message: 'unknown model ID "fam_c-54"' });
    });

    it('names a model_tuning key of megabytes once, not again in every error below it', async () => {
      const key = 'k'.repeat(1_000_000);
      const params = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`p${i}`, 1]));
      const errors = await fieldErrors(body({ model_tuning: { [key]: params, 'fam_c-5.4': { verbosity: 1 } } }));
      // It listed 100 copies of the key (100 MB), in 5 s.
      expect(errors).toEqual([
        { field: `/model_tuning/${key.slice(0, LIMITS.modelIdChars)}…`, message: 'is not a valid model ID key' },
        { field: '/model_tuning/fam_c-5.4/verbosity', message: 'is not a known field' },
      ]);
    });

    it.each([
      ['an unknown field below it', { a: 1 }],
      ['a value that is no object', 'x'],
    ])('names a model_tuning key over 100 characters once, its first 100 and an ellipsis, with nothing below it: %s', async (_name, value) => {
      const key = 'k'.repeat(LIMITS.modelIdChars + 50);
      const errors = await fieldErrors(body({ model_tuning: { [key]: value } }));
      expect(errors).toEqual([{ field: `/model_tuning/${'k'.repeat(LIMITS.modelIdChars)}…`, message: 'is not a valid model ID key' }]);
    });

    it('escapes model IDs used as pointer segments', async () => {
      const errors = await fieldErrors(body({ model_tuning: { 'a/b~c': {} } }));
      expect(errors[0]?.field).toBe('/model_tuning/a~1b~0c');
    });
  });

  describe('accepts', () => {
    it('a minimal request and resolves its models in request order', () => {
      const request = validatePromptRequest(body());
      expect(request.models.map((m) => [m.requestedId, m.entry.provider])).toEqual([
        ['fam_c-5.4', 'openai'],
        ['fam_a-opus-4-6', 'anthropic'],
        ['fam_b-3.1-pro', 'google'],
      ]);
      expect(request.judgeWeights).toEqual({ accuracy: 1, speed: 0, cost: 0 });
      expect(request.system).toEqual([]);
    });

    it('a response_schema whose anyOf requires one property or another (subschemas that only require: no additionalProperties of their own)', () => {
      const schema = {
        type: 'object',
        properties: { email: { type: 'string' }, phone: { type: 'string' } },
        additionalProperties: false,
        anyOf: [{ required: ['email'] }, { required: ['phone'] }],
      };
      expect(validatePromptRequest(body({ response_schema: schema })).outputSchema).toBe(JSON.stringify(schema));
    });

    it("judge weights all 0, each in the contract's range (nothing weighed: the judges' verdicts decide, as with the defaults), with or without judges", () => {
      for (const judge_weights of [{ accuracy: 0 }, { accuracy: 0, speed: 0, cost: 0 }]) {
        expect(validatePromptRequest(body({ judge_weights })).judgeWeights).toEqual({ accuracy: 0, speed: 0, cost: 0 });
        expect(validatePromptRequest(body({ judge_weights, judges: ['fam_c-4.1'] })).judgeWeights).toEqual({ accuracy: 0, speed: 0, cost: 0 });
      }
    });

    it('vendor spellings of IDs, echoing what was sent', () => {
      const request = validatePromptRequest(body({ models: ['gpt-5.4', 'claude-opus-4-6', 'gemini-3.1-pro', 'grok-4.3', 'deepseek-v4-pro', 'mistral-large', 'nova-pro'] }));
      expect(request.models.map((m) => m.entry.id)).toEqual(['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro', 'fam_d-4.3', 'fam_f-v4-pro', 'fam_g-large', 'fam_h-pro']);
      expect(request.models.map((m) => m.requestedId)[0]).toBe('gpt-5.4');
    });

    it('every field of the contract at once', () => {
      const request = validatePromptRequest({
        prompt: 'Explain caching',
        models: ['fam_a-opus-4-6', 'fam_b-3.1-pro', 'fam_c-5.4', 'fam_d-4.3'],
        judges: ['fam_c-4.1'],
        judge_prompt: 'Prefer the most accurate answer',
        judge_weights: { accuracy: 0.7, speed: 0.3 },
        attachments: [
          { name: 'chart.png', type: 'image/png', base64: PNG_BASE64 },
          { name: 'doc.pdf', type: 'application/pdf', base64: PDF_BASE64 },
        ].slice(0, 1),
        system_prompt: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
        history: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello', cache_control: { type: 'ephemeral' } },
        ],
        generation_settings: { temperature: 0, maxTokens: 512, topP: 1 },
        response_schema: strictSchema,
        model_tuning: {
          'fam_a-opus-4-6': { thinkingBudget: 0 },
          'fam_b-3.1-pro': { thinkingBudget: 24576, webSearch: true, cachedContent: 'cachedContents/abc-123' },
          'fam_c-5.4': { reasoningEffort: 'high' },
          'fam_d-4.3': { reasoningEffort: 'none' },
        },
        zero_data_retention: true,
      });
      expect(request.judgeWeights).toEqual({ accuracy: 0.7, speed: 0.3, cost: 0 });
      expect(request.models.find((m) => m.entry.id === 'fam_b-3.1-pro')?.tuning).toEqual({
        thinkingBudget: 24576,
        webSearch: true,
        cachedContent: 'cachedContents/abc-123',
      });
      expect(request.system).toHaveLength(1);
    });

    it.each([
      ['fam_a-sonnet-4-6', { thinkingBudget: 1024 }],
      ['fam_a-opus-4-7', { thinkingBudget: 32000 }],
      ['fam_b-3.5-flash', { thinkingBudget: 0 }],
      ['o3-mini', { reasoningEffort: 'low' }],
      ['fam_d-4.20-0309-reasoning', { reasoningEffort: 'none' }],
      ['fam_e-gpt-oss-120b', { reasoningEffort: 'medium' }],
      ['fam_e-glm-4.7', { reasoningEffort: 'high' }],
    ])('tuning %s with %j', (model, tuning) => {
      const request = validatePromptRequest(body({ models: [model], model_tuning: { [model]: tuning } }));
      expect(request.models[0]?.tuning).toEqual(tuning);
    });

    it('tuning keyed by the vendor spelling of a requested model', () => {
      const request = validatePromptRequest(body({ models: ['fam_c-5.4'], model_tuning: { 'gpt-5.4': { reasoningEffort: 'low' } } }));
      expect(request.models[0]?.tuning).toEqual({ reasoningEffort: 'low' });
    });

    it('a string system prompt as one block', () => {
      expect(validatePromptRequest(body({ system_prompt: 'Be brief' })).system).toEqual([{ type: 'text', text: 'Be brief' }]);
    });

    it('a blank string system prompt as no system prompt at all', () => {
      expect(validatePromptRequest(body({ system_prompt: '' })).system).toEqual([]);
      expect(validatePromptRequest(body({ system_prompt: ' \n ' })).system).toEqual([]);
    });

    it('a history that starts with an assistant turn for models whose vendors take one', () => {
      const models = ['fam_c-5.4', 'fam_b-3.1-pro', 'fam_d-4.3', 'fam_e-glm-4.7', 'fam_g-large', 'fam_i-gpt-oss-120b'];
      const history = [
        { role: 'assistant', content: 'Hello!' },
        { role: 'assistant', content: 'Ask me anything.' },
      ];
      expect(validatePromptRequest(body({ models, history })).models).toHaveLength(6);
    });

    it('consecutive turns of one role, which the adapters merge where a vendor wants them to alternate', () => {
      const history = [
        { role: 'user', content: 'One.' },
        { role: 'user', content: 'Two.' },
        { role: 'assistant', content: 'Three.' },
      ];
      const request = validatePromptRequest(body({ models: ['fam_h-pro', 'fam_a-opus-4-6', 'fam_f-v4-pro'], history }));
      expect(request.body.history).toEqual(history);
    });

    it('a PDF for models that take PDFs', () => {
      const request = validatePromptRequest(body({ models: ['fam_a-opus-4-6'], attachments: [{ name: 'a.pdf', type: 'application/pdf', base64: PDF_BASE64 }] }));
      expect(request.body.attachments).toHaveLength(1);
      // Five for Nova (its most), and six for models that take more.
      const pdfs = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `${i}.pdf`, type: 'application/pdf', base64: PDF_BASE64 }));
      expect(validatePromptRequest(body({ models: ['fam_h-pro', 'fam_h-lite'], attachments: pdfs(5) })).body.attachments).toHaveLength(5);
      expect(validatePromptRequest(body({ models: ['fam_a-opus-4-6', 'fam_c-5.4'], attachments: pdfs(6) })).body.attachments).toHaveLength(6);
    });
  });
});
