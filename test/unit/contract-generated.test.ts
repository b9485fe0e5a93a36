import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GENERATED_VALIDATOR, generateValidatorSource } from '../../infra/contract/generate-validator.js';

describe('Module: shared/contract/generated/prompt-request-validator.js', () => {
  it('is what the contract schema compiles to now (run `npm run contract` after changing the schema)', async () => {
    expect(readFileSync(GENERATED_VALIDATOR, 'utf8')).toBe(await generateValidatorSource());
  });

  it('is plain ESM with no CommonJS require', () => {
    expect(readFileSync(GENERATED_VALIDATOR, 'utf8')).not.toMatch(/\brequire\(/);
  });
});
