import { describe, expect, it } from 'vitest';
import { InsufficientCreditsError, type CreditsEstimate } from '../../shared/errors.js';

/** An estimate of two models, each `credits` with `inputCredits` of it its input. */
function estimate(credits: number, inputCredits: number, more: Partial<CreditsEstimate> = {}): CreditsEstimate {
  const model = (modelId: string) => ({ modelId, credits, inputTokens: 1_000, inputCredits, outputTokens: 100 });
  return { models: [model('fam_c-5.4'), model('fam_a-opus-4-6')], judgeCalls: { calls: 0, credits: 0 }, ...more };
}

const message = (of: CreditsEstimate) => new InsufficientCreditsError(10, 1, of).message;

describe('Class: InsufficientCreditsError, what its message says lowers the estimate', () => {
  it("names maxTokens where the output is most of the models' part", () => {
    expect(message(estimate(5, 1))).toMatch(/every model writing its whole output limit\. A lower generation_settings\.maxTokens lowers it$/);
  });

  it("names the input where it is most of the models' part, and never maxTokens", () => {
    const said = message(estimate(5, 4));
    expect(said).toMatch(/most of the models' part their input\. A shorter input, fewer attachments or fewer models lower it$/);
    expect(said).not.toMatch(/maxTokens/);
  });

  it('names a PDF whose pages could not be counted by its pointer', () => {
    expect(message(estimate(5, 4, { uncountedPdfs: ['/attachments/1'] }))).toMatch(
      /the pages of the PDF at \/attachments\/1 could not be counted .*whole context window\. A PDF whose pages can be read \(held at what they count\), a shorter input, fewer attachments or fewer models lower it$/,
    );
  });

  it('names a Gemini cachedContent, which a shorter input does not lower, by its model', () => {
    const of = estimate(5, 4);
    of.models[0]!.cachedContentTokens = 999_000;
    expect(message(of)).toMatch(
      /the model_tuning\.cachedContent of fam_c-5\.4 is held at all the context its model's input leaves .*\. No cachedContent, a shorter input, fewer attachments or fewer models lower it$/,
    );
  });

  it("names the search queries a webSearch holds where they are most of the models' part, and says maxTokens hardly lowers it (it had named maxTokens alone)", () => {
    const of = estimate(5, 0.1);
    of.models[1] = { ...of.models[1]!, credits: 14, searchQueries: 10, searchCredits: 14 };
    const said = message(of);
    expect(said).toMatch(
      /every model writing its whole output limit, and the most search queries a model may be charged, most of the models' part those queries: 10 for fam_a-opus-4-6 \(its model_tuning\.webSearch, or a cachedContent, which may turn it on\)\. No webSearch \(and no cachedContent\) on those models lowers it; a lower generation_settings\.maxTokens hardly does$/,
    );
  });

  it('says what the judge calls hold beside either, and what lowers their part', () => {
    const judgeCalls = { calls: 12, credits: 7 };
    for (const [of, models] of [
      [estimate(5, 1, { judgeCalls }), /every model writing its whole output limit, and each of the 12 judge calls/],
      [estimate(5, 4, { judgeCalls }), /most of the models' part their input, and each of the 12 judge calls/],
    ] as const) {
      const said = message(of);
      expect(said).toMatch(models);
      expect(said).toMatch(/\(7 of the credits: .*fewer models or judges, or a cheaper judge, lowers the judge calls' part$/);
    }
  });
});
