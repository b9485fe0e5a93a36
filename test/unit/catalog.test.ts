import { describe, expect, it } from 'vitest';
import { allModels, resolveModel, vendorSpelling } from '../../shared/catalog/index.js';
import { MODELS } from '../../shared/catalog/models.js';
import { modelListing, modelListingJson } from '../../shared/catalog/listing.js';
import { samplingSupport } from '../../shared/providers/openai-responses/sampling.js';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { planCall } from '../../shared/compare/model-call.js';
import { minCacheTokens } from '../../infra/local/simulator/anthropic-messages/validate.js';

/** Every model ID the contract shows (spec 2.13, 2.14, 2.6). */
const CONTRACT_IDS = {
  flagship: [
    'fam_c-5.4',
    'fam_c-5.4-pro',
    'fam_c-5',
    'fam_c-4.1',
    'fam_c-4o',
    'o3-mini',
    'fam_d-4.20-0309-reasoning',
    'fam_a-opus-4-6',
    'fam_a-sonnet-4-6',
    'fam_b-3.1-pro',
    'fam_i-gpt-oss-120b',
    'fam_e-gpt-oss-120b',
    'fam_e-glm-4.7',
    'fam_f-v4-pro',
    'fam_g-large',
    'fam_h-pro',
  ],
  fast: [
    'fam_c-5.4-mini',
    'fam_c-5.4-nano',
    'fam_c-5-mini',
    'fam_c-5-nano',
    'fam_d-4.20-0309-non-reasoning',
    'fam_d-4.3',
    'fam_a-haiku-4-5',
    'fam_b-3.5-flash',
    'fam_b-3.1-flash-lite',
    'fam_i-4-scout',
    'fam_i-gpt-oss-20b',
    'fam_j3-32b',
    'fam_f-v4-flash',
    'fam_g-medium',
    'fam_g-small',
    'fam_k-8b',
    'fam_l',
    'fam_h-lite',
    'fam_h-micro',
  ],
  legacy: [
    'fam_c-4o-mini',
    'fam_c-4-turbo',
    'fam_a-sonnet-4.5',
    'fam_a-opus-4.5',
    'fam_a-opus-4.1',
    'fam_a-sonnet-4',
    'fam_a-opus-4',
    'fam_b-3.1-flash',
    'fam_b-2.5-flash',
    'fam_b-2.5-flash-lite',
    'fam_i-3.3-70b',
    'fam_i-3.1-8b',
    'fam_d-3',
    'fam_d-3-mini',
  ],
  other: ['fam_a-opus-4-7', 'o3', 'o4-mini'],
};
const ALL = Object.values(CONTRACT_IDS).flat();

const PROVIDER_OF_FAMILY: Record<string, string> = {
  fam_a: 'anthropic',
  fam_b: 'google',
  fam_c: 'openai',
  fam_d: 'xai',
  fam_e: 'cerebras',
  fam_f: 'deepseek',
  fam_g: 'mistral',
  fam_k: 'mistral',
  fam_l: 'mistral',
  fam_h: 'bedrock',
  fam_i: 'groq',
  fam_j3: 'groq',
};

describe('Module: catalog', () => {
  it('holds exactly the contract IDs, each in the tier the contract lists it', () => {
    expect(
      allModels()
        .map((m) => m.id)
        .sort(),
    ).toEqual([...ALL].sort());
    for (const [tier, ids] of Object.entries(CONTRACT_IDS)) {
      for (const id of ids) expect(resolveModel(id)?.tier, id).toBe(tier);
    }
  });

  it.each(ALL)('%s routes to its family provider with complete prices and limits', (id) => {
    const entry = resolveModel(id)!;
    expect(entry.provider).toBe(PROVIDER_OF_FAMILY[entry.family]);
    expect(entry.prices.input).toBeGreaterThan(0);
    expect(entry.prices.output).toBeGreaterThan(0);
    expect(entry.prices.takenOn).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(entry.defaultMaxTokens).toBeLessThanOrEqual(entry.maxOutputTokens);
    expect(entry.upstreamModel.length).toBeGreaterThan(0);
  });

  it.each([
    ['gpt-5.4', 'fam_c-5.4'],
    ['claude-opus-4-6', 'fam_a-opus-4-6'],
    ['gemini-3.1-pro', 'fam_b-3.1-pro'],
    ['grok-4.3', 'fam_d-4.3'],
    ['cerebras-gpt-oss-120b', 'fam_e-gpt-oss-120b'],
    ['groq-gpt-oss-120b', 'fam_i-gpt-oss-120b'],
    ['deepseek-v4-pro', 'fam_f-v4-pro'],
    ['mistral-large', 'fam_g-large'],
    ['nova-pro', 'fam_h-pro'],
    ['qwen3-32b', 'fam_j3-32b'],
    ['ministral-8b', 'fam_k-8b'],
    ['codestral', 'fam_l'],
  ])('resolves the vendor spelling %s to %s', (alias, id) => {
    expect(resolveModel(alias)?.id).toBe(id);
    expect(vendorSpelling(resolveModel(id)!)).toBe(alias);
  });

  it("calls Mistral's models by their dated names, which Mistral does not move to the next version as it moves a -latest alias", () => {
    const aliased = MODELS.filter((entry) => entry.provider === 'mistral' && entry.upstreamModel.endsWith('-latest')).map((entry) => entry.id);
    // Medium alone: its dated name is not settled in the sources (catalog/models.ts).
    expect(aliased).toEqual(['fam_g-medium']);
    expect(resolveModel('fam_g-large')?.upstreamModel).toBe('mistral-large-2512');
  });

  it('resolves nothing else', () => {
    expect(resolveModel('FAM_C-5.4')).toBeUndefined();
    expect(resolveModel('fam_c-5.4 ')).toBeUndefined();
    expect(resolveModel('gpt-5.4-turbo')).toBeUndefined();
  });

  it('gives tuning exactly to the models of spec 2.6', () => {
    const tuned = Object.fromEntries(
      allModels()
        .filter((m) => Object.keys(m.capabilities.tuning).length > 0)
        .map((m) => [m.id, m.capabilities.tuning]),
    );
    const gemini = { thinkingBudget: { min: 0, max: 24576 }, webSearch: true, cachedContent: true };
    const lmh = { reasoningEffort: ['low', 'medium', 'high'] };
    expect(tuned).toEqual({
      'fam_a-sonnet-4-6': { thinkingBudget: { min: 1024, max: 32000 } },
      'fam_a-opus-4-7': { thinkingBudget: { min: 1024, max: 32000 } },
      'fam_a-opus-4-6': { thinkingBudget: { min: 1024, max: 32000 } },
      'fam_b-3.5-flash': gemini,
      'fam_b-3.1-pro': gemini,
      'fam_b-3.1-flash': gemini,
      'fam_b-3.1-flash-lite': gemini,
      ...Object.fromEntries(
        ['o3-mini', 'o3', 'o4-mini', 'fam_c-5.4-pro', 'fam_c-5.4', 'fam_c-5.4-mini', 'fam_c-5.4-nano', 'fam_c-5', 'fam_c-5-mini', 'fam_c-5-nano'].map((id) => [id, lmh]),
      ),
      'fam_d-4.20-0309-reasoning': { reasoningEffort: ['none', 'low', 'medium', 'high'] },
      'fam_d-4.3': { reasoningEffort: ['none', 'low', 'medium', 'high'] },
      'fam_e-gpt-oss-120b': lmh,
      'fam_e-glm-4.7': lmh,
    });
  });

  it('uses native structured output for fam_c, fam_b and fam_h (tool) as spec 1.5 says', () => {
    // The models as declared: a retired one answered by its successor takes the successor's way (fam_j3-32b by gpt-oss-120b, native).
    for (const entry of allModels(0)) {
      if (entry.family === 'fam_b') expect(entry.capabilities.structuredOutput, entry.id).toBe('native');
      if (entry.family === 'fam_h') expect(entry.capabilities.structuredOutput, entry.id).toBe('tool');
      if (['fam_a', 'fam_d', 'fam_e', 'fam_f', 'fam_g', 'fam_k', 'fam_l', 'fam_j3'].includes(entry.family)) {
        expect(entry.capabilities.structuredOutput, entry.id).toBe('instruction');
      }
    }
  });

  it("keeps the cache rules of spec 2.9, with Anthropic's higher minimum where it caches nothing below it", () => {
    expect(resolveModel('fam_a-sonnet-4.5')!.capabilities.cache).toEqual({ mode: 'explicit', minTokens: 1024 });
    for (const id of ['fam_a-opus-4-6', 'fam_a-opus-4.5', 'fam_a-haiku-4-5']) expect(resolveModel(id)!.capabilities.cache, id).toEqual({ mode: 'explicit', minTokens: 4096 });
    expect(resolveModel('fam_b-3.1-pro')!.capabilities.cache).toEqual({ mode: 'explicit', minTokens: 32768 });
    expect(resolveModel('fam_c-5.4')!.capabilities.cache).toEqual({ mode: 'automatic', minTokens: 1024 });
    expect(resolveModel('fam_f-v4-pro')!.capabilities.cache).toEqual({ mode: 'automatic', minTokens: 64 });
    expect(resolveModel('fam_g-large')!.capabilities.cache.mode).toBe('automatic');
  });
});

describe('Feature: retired vendor models', () => {
  const day = 24 * 60 * 60 * 1000;
  const retiredIds = allModels(0)
    .filter((entry) => entry.retirement)
    .map((entry) => entry.id);

  it('sends no retired vendor model from a model that stays (the same vendor and name would be one model, retired and not)', () => {
    const staying = new Set(MODELS.filter((entry) => !entry.retirement).map((entry) => `${entry.provider}/${entry.upstreamModel}`));
    expect(MODELS.filter((entry) => entry.retirement && staying.has(`${entry.provider}/${entry.upstreamModel}`)).map((entry) => entry.id)).toEqual([]);
  });

  it('lists the shutdowns the vendors announced for models of the contract', () => {
    expect(Object.fromEntries(allModels(0).flatMap((entry) => (entry.retirement ? [[entry.id, entry.retirement]] : [])))).toEqual({
      'o3-mini': { on: '2026-10-23', successor: 'fam_c-5.4-mini' },
      'o4-mini': { on: '2026-10-23', successor: 'fam_c-5.4-mini' },
      'fam_c-4-turbo': { on: '2026-10-23', successor: 'fam_c-5.4' },
      'fam_c-5': { on: '2026-12-11', successor: 'fam_c-5.4' },
      'fam_c-5-mini': { on: '2026-12-11', successor: 'fam_c-5.4-mini' },
      'fam_c-5-nano': { on: '2026-12-11', successor: 'fam_c-5.4-nano' },
      o3: { on: '2026-12-11', successor: 'fam_c-5.4' },
      'fam_c-4.1': { on: '2027-01-14', successor: 'fam_c-5.4' },
      'fam_c-4o': { on: '2027-01-14', successor: 'fam_c-5.4' },
      'fam_c-4o-mini': { on: '2027-01-14', successor: 'fam_c-5.4-mini' },
      'fam_a-sonnet-4': { on: '2026-06-15', successor: 'fam_a-sonnet-4-6' },
      'fam_a-opus-4': { on: '2026-06-15', successor: 'fam_a-opus-4-6' },
      'fam_a-opus-4.1': { on: '2026-08-05', successor: 'fam_a-opus-4-6' },
      'fam_a-sonnet-4.5': { on: '2026-11-30', successor: 'fam_a-sonnet-4-6' },
      'fam_d-3': { on: '2026-05-15', successor: 'fam_d-4.3' },
      'fam_d-3-mini': { on: '2026-05-15', successor: 'fam_d-4.3' },
      'fam_e-glm-4.7': { on: '2026-08-17', successor: 'fam_e-gpt-oss-120b' },
      'fam_i-4-scout': { on: '2026-07-17', successor: 'fam_i-gpt-oss-120b' },
      'fam_j3-32b': { on: '2026-07-17', successor: 'fam_i-gpt-oss-120b' },
      'fam_i-3.3-70b': { on: '2026-08-16', successor: 'fam_i-gpt-oss-120b' },
      'fam_i-3.1-8b': { on: '2026-08-16', successor: 'fam_i-gpt-oss-20b' },
    });
  });

  it.each(retiredIds)('%s answers as itself until its day, then as its successor at its prices, under its own ID and tuning', (id) => {
    const declared = resolveModel(id, 0)!;
    const { on, successor: successorId } = declared.retirement!;
    const from = Date.parse(`${on}T00:00:00Z`);
    const successor = resolveModel(successorId, from)!;
    expect(resolveModel(id, from - 1)).toBe(declared);
    const served = resolveModel(id, from)!;
    expect(resolveModel(id, from + 400 * day)).toBe(served);
    expect(served).toMatchObject({
      id,
      family: declared.family,
      tier: declared.tier,
      provider: successor.provider,
      upstreamModel: successor.upstreamModel,
      protocol: successor.protocol,
      prices: successor.prices,
      maxOutputTokens: successor.maxOutputTokens,
      contextWindow: successor.contextWindow,
      capabilities: { ...successor.capabilities, tuning: declared.capabilities.tuning },
    });
    expect(served.retirement).toBeUndefined();
    expect(served.servedBy).toBe(
      `${{ openai: 'OpenAI', anthropic: 'Anthropic', xai: 'xAI', groq: 'Groq', cerebras: 'Cerebras' }[declared.provider as string]} shut ${declared.upstreamModel} down on ${on}; ${successor.upstreamModel} (${successorId}) answers this ID in its place, at its prices`,
    );
    // The vendor spelling follows the ID it names.
    const alias = vendorSpelling(declared);
    if (alias) expect(resolveModel(alias, from)).toBe(served);
  });

  it.each(retiredIds)("%s's successor takes everything the contract lets a caller send it", (id) => {
    const declared = resolveModel(id, 0)!;
    const successor = resolveModel(declared.retirement!.successor, 0)!;
    expect(successor.retirement).toBeUndefined();
    expect(successor.provider).toBe(declared.provider);
    // Attachments depend on the model (spec 2.2): Groq's replacement for Scout takes no images (a request with one is refused, saying why).
    if (id !== 'fam_i-4-scout') expect(successor.capabilities.attachments).toEqual(expect.arrayContaining([...declared.capabilities.attachments]));
    const { reasoningEffort, thinkingBudget, webSearch, cachedContent } = declared.capabilities.tuning;
    if (reasoningEffort) expect(successor.capabilities.tuning.reasoningEffort).toEqual(expect.arrayContaining([...reasoningEffort]));
    if (thinkingBudget) expect(successor.capabilities.tuning.thinkingBudget).toBeDefined();
    if (webSearch) expect(successor.capabilities.tuning.webSearch).toBe(true);
    if (cachedContent) expect(successor.capabilities.tuning.cachedContent).toBe(true);
  });

  it('says, from its day, that the vendor answers fam_b-2.5-flash with a model of its own, which the catalog does not list; a note before', () => {
    const before = Date.parse('2026-11-30T23:59:59Z');
    const after = Date.parse('2026-12-01T00:00:00Z');
    const declared = resolveModel('fam_b-2.5-flash', before)!;
    expect(declared.servedBy).toBeUndefined();
    const served = resolveModel('fam_b-2.5-flash', after)!;
    // The same name sent, at the same prices: only the warning on every result differs.
    expect(served).toMatchObject({ upstreamModel: 'gemini-2.5-flash', prices: declared.prices, protocol: declared.protocol });
    expect(served.servedBy).toBe(
      'Google answers gemini-2.5-flash with gemini-3.5-flash-lite since 2026-12-01: gemini-3.5-flash-lite answered, priced as gemini-2.5-flash (the catalog lists no prices of its own for it)',
    );
    const request = validatePromptRequest({ prompt: 'Hi', models: ['fam_b-2.5-flash'] });
    expect(planCall(request, { ...request.models[0]!, entry: served }).warnings).toEqual([served.servedBy]);
    const listed = (now: number) => modelListing(now).models.find((model) => model.id === 'fam_b-2.5-flash')!;
    expect(listed(before).notes).toEqual(['Google answers gemini-2.5-flash with gemini-3.5-flash-lite from 2026-12-01; the gateway still sends gemini-2.5-flash, at its prices']);
    expect(listed(after).notes).toEqual([served.servedBy]);
  });

  it('lists an announced shutdown as a note until the day, and the model that answers from then on', () => {
    const before = Date.parse('2026-12-10T12:00:00Z');
    const after = Date.parse('2026-12-11T00:00:00Z');
    const listedO3 = (now: number) => modelListing(now).models.find((model) => model.id === 'o3')!;
    expect(listedO3(before)).toMatchObject({
      upstreamModel: 'o3',
      prices: resolveModel('o3', 0)!.prices,
      notes: ['OpenAI shuts o3 down on 2026-12-11; from then gpt-5.4 (fam_c-5.4) answers this ID, at its prices'],
    });
    expect(listedO3(after)).toMatchObject({
      upstreamModel: 'gpt-5.4',
      prices: resolveModel('fam_c-5.4', after)!.prices,
      notes: ['OpenAI shut o3 down on 2026-12-11; gpt-5.4 (fam_c-5.4) answers this ID in its place, at its prices'],
    });
    // The listing's JSON, kept between requests, is made again once a retirement takes effect.
    expect(JSON.parse(modelListingJson(before)).models.find((model: { id: string }) => model.id === 'o3').upstreamModel).toBe('o3');
    expect(JSON.parse(modelListingJson(after)).models.find((model: { id: string }) => model.id === 'o3').upstreamModel).toBe('gpt-5.4');
  });

  it('reads the catalog once a validation, at the instant it is given: the tuning of a model retired at that very instant is its own', () => {
    const at = Date.parse('2026-12-11T00:00:00Z');
    const request = validatePromptRequest({ prompt: 'p', models: ['o3'], model_tuning: { o3: { reasoningEffort: 'high' } } }, at);
    expect(request.catalogAt).toBe(at);
    expect(request.models[0]).toMatchObject({ requestedId: 'o3', entry: { upstreamModel: 'gpt-5.4' }, tuning: { reasoningEffort: 'high' } });
    expect(validatePromptRequest({ prompt: 'p', models: ['o3'] }, at - 1).models[0]!.entry.upstreamModel).toBe('o3');
  });

  it('sends a retired non-reasoning model the successor reasoning model would take: temperature only with effort none', () => {
    const served = resolveModel('fam_c-4o', Date.parse('2027-01-14T00:00:00Z'))!;
    expect(samplingSupport(served, {})).toBe('with-effort-none');
    expect(samplingSupport(resolveModel('fam_c-4o', 0)!, {})).toBe('accepted');
  });
});

describe('Feature: cache minimums, the catalog against the simulator', () => {
  it("has the simulator cache an Anthropic model's prefix from the minimum the catalog warns under, no sooner (Opus 4.7's had cached from 1,024)", () => {
    const anthropic = MODELS.filter((entry) => entry.provider === 'anthropic' && entry.capabilities.cache.mode === 'explicit');
    expect(anthropic.length).toBeGreaterThan(0);
    for (const entry of anthropic) expect(minCacheTokens(entry.upstreamModel), entry.id).toBe(entry.capabilities.cache.minTokens);
  });
});
