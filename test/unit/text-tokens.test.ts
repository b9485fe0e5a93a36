import { describe, expect, it } from 'vitest';
import { textTokens } from '../../shared/text/text-tokens.js';

describe('Function: textTokens (what a call whose usage is missing is charged for its text)', () => {
  it('counts letters, digits and whitespace 4 a token', () => {
    expect(textTokens('Hello world 2026')).toBe(4);
  });

  it('counts every punctuation mark and symbol a token: a text made of them cannot be charged a quarter of what it tokenizes to', () => {
    // Tokenizers seldom join such characters: 1,000 of them are several hundred to 1,000 tokens, never 250.
    expect(textTokens('!@#$%^&*'.repeat(125))).toBe(1_000);
    // Code and JSON sit between the two: `{"a": 1}` is 3 letters, digits and spaces and 5 marks.
    expect(textTokens('{"a": 1}')).toBe(3 / 4 + 5);
  });

  it('counts every character outside ASCII a token (Chinese, Japanese or Korean text about a token a character)', () => {
    expect(textTokens('日本語のテキスト')).toBe(8);
  });
});
