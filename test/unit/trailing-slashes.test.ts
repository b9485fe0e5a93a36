import { describe, expect, it } from 'vitest';
import { withoutTrailingSlashes } from '../../shared/text/trailing-slashes.js';

describe('Function: withoutTrailingSlashes', () => {
  it.each([
    ['/api/v1/models/', '/api/v1/models'],
    ['https://sim.example/v1///', 'https://sim.example/v1'],
    ['/api/v1/models', '/api/v1/models'],
    ['/', ''],
    ['', ''],
  ])('takes the slashes off the end of %j only', (path, expected) => {
    expect(withoutTrailingSlashes(path)).toBe(expected);
  });

  it('leaves a run of slashes before a letter as it is', () => {
    const path = `${'/'.repeat(12_000)}a`;
    expect(withoutTrailingSlashes(path)).toBe(path);
  });
});
