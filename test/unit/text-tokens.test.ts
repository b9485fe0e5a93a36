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

  it('counts the characters of a run of one that every tokenizer packs past its 4th 8 a token (a rule line, indentation)', () => {
    // A table's border a model repeats to its limit: o200k takes 4,000 dashes in 62 tokens; here 4 + 4,000 / 8.
    expect(textTokens('-'.repeat(4_004))).toBe(4 + 500);
    for (const mark of ['=', '_', '*', '#', '.', '/', '~', '%', '─']) expect(textTokens(mark.repeat(804)), mark).toBe(4 + 100);
    // Indentation (48 spaces about 5 tokens).
    expect(textTokens(' '.repeat(52))).toBe(4 / 4 + 48 / 8);
    // Each run starts again: mixed marks are no run, and letters or digits repeated count as letters.
    expect(textTokens('-=-=-=-=')).toBe(8);
    expect(textTokens('a'.repeat(400))).toBe(100);
    expect(textTokens(`| a | b |\n|${'-'.repeat(20)}|`)).toBe(textTokens('| a | b |\n|----') + 16 / 8 + 1);
  });

  it('counts the runs some tokenizer takes a token (or two) a character whole: box drawing but `─`, brackets and quotes, tabs and line ends', () => {
    // o200k: 2,000 `┼` are 4,000 tokens, `│` 2,000; cl100k: `━` 1,000; Llama 2: 2,000 tabs 2,000.
    for (const mark of ['┼', '│', '━', '╔']) expect(textTokens(mark.repeat(2_000)), mark).toBe(2_000);
    for (const mark of ['{', '"', '|', '(']) expect(textTokens(mark.repeat(2_000)), mark).toBe(2_000);
    for (const mark of ['\t', '\n']) expect(textTokens(mark.repeat(2_000))).toBe(500);
  });

  it('counts every character outside ASCII a token (Chinese, Japanese or Korean text about a token a character)', () => {
    expect(textTokens('日本語のテキスト')).toBe(8);
  });
});
