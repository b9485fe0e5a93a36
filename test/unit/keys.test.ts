import { describe, expect, it } from 'vitest';
import { bearerKey, generateApiKey, hashApiKey, keyPrefix } from '../../shared/auth/keys.js';

describe('Module: keys', () => {
  it('issues distinct keys and stores them as SHA-256 hex', () => {
    const a = generateApiKey();
    expect(a).not.toBe(generateApiKey());
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('names a key by 4 of its characters: after mcg_ for issued keys, its first 4 for a pinned key of another shape', () => {
    expect(keyPrefix('mcg_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdE')).toBe('mcg_AbCd');
    expect(keyPrefix('R114pinnedSECRET')).toBe('R114');
  });

  it.each([
    [undefined, undefined],
    ['', undefined],
    ['Bearer', undefined],
    ['Bearer  ', undefined],
    ['Token mcg_aaaaaaaaaaaaaaaaaaaa', undefined],
    ['Bearer mcg_aaaaaaaaaaaaaaaaaaaa extra', undefined],
    ['Bearer short', undefined],
    [`Bearer ${'a'.repeat(257)}`, undefined],
    // One spelling a key: more spaces, a trailing blank or a tab would each count apart at the edge.
    ['Bearer  mcg_aaaaaaaaaaaaaaaaaaaa', undefined],
    ['Bearer mcg_aaaaaaaaaaaaaaaaaaaa ', undefined],
    ['Bearer\tmcg_aaaaaaaaaaaaaaaaaaaa', undefined],
    ['Bearer mcg_aaaaaaaaaaaaaaaaaaaa', 'mcg_aaaaaaaaaaaaaaaaaaaa'],
    ['bearer mcg_aaaaaaaaaaaaaaaaaaaa', 'mcg_aaaaaaaaaaaaaaaaaaaa'],
    ['bEaReR mcg_aaaaaaaaaaaaaaaaaaaa', 'mcg_aaaaaaaaaaaaaaaaaaaa'],
  ])('reads the key of %j', (header, key) => {
    expect(bearerKey(header)).toBe(key);
  });
});
