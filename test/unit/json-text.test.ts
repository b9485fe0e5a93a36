import { describe, expect, it } from 'vitest';
import { jsonText } from '../../shared/text/json-text.js';

describe('Function: jsonText', () => {
  it('writes half a surrogate pair, in a string or a member name, as U+FFFD, and leaves whole pairs and escaped backslashes as JSON.stringify writes them', () => {
    const value = { 'a\ud800': ['x\udc00y', '😀', 'the text \\ud800', '\\\ud83d'], plain: 'café' };
    const text = jsonText(value);
    expect(text.isWellFormed()).toBe(true);
    expect(JSON.parse(text)).toEqual({ 'a\ufffd': ['x\ufffdy', '😀', 'the text \\ud800', '\\\ufffd'], plain: 'café' });
    // Text without half a pair is JSON.stringify's, as it is.
    expect(jsonText({ plain: 'café 😀 \\ud800' })).toBe(JSON.stringify({ plain: 'café 😀 \\ud800' }));
  });
});
