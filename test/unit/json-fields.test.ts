import { describe, expect, it } from 'vitest';
import { MAX_FIELDS, readRequestJson, tooManyJsonFields } from '../../shared/contract/json-fields.js';
import { parseVendorJson } from '../../shared/providers/vendor-json.js';

const repeated = (text: string) => readRequestJson(text).repeated;

describe('Function: readRequestJson', () => {
  it.each([
    ['a top-level member', '{"prompt":"hi","models":["nope"],"models":["fam_k-8b"]}', ['/models']],
    ['a name spelt with escapes', '{"prompt":"hi","\\u006dodels":["nope"],"models":["fam_k-8b"]}', ['/models']],
    ['a name spelt with other escapes', '{"a\\/b":1,"a/b":2,"\\"q\\"":1,"\\u0022q\\u0022":2}', ['/a~1b', '/"q"']],
    ['whitespace around the names', '{ "a" : 1 ,\n\t"a" : 2 }', ['/a']],
    ['a member of a nested object', '{"history":[{"role":"user","content":"a"},{"role":"user","content":"a","content":"b"}]}', ['/history/1/content']],
    ['a name to escape in the pointer', '{"model_tuning":{"a/b~c":{},"a/b~c":{}}}', ['/model_tuning/a~1b~0c']],
    ['a member of an object in arrays', '[[{"a":1}],[1,{"b":[],"b":{}}]]', ['/1/1/b']],
    ['each name once per object, in the order of the text', '{"b":1,"a":1,"b":2,"a":2,"b":3,"x":{"b":1,"b":1}}', ['/b', '/a', '/x/b']],
    ['an empty name', '{"":1,"":2}', ['/']],
  ])('names %s repeated by its JSON pointer', (_name, text, pointers) => {
    expect(repeated(text)).toEqual(pointers);
  });

  it.each([
    ['one name in two objects', '{"a":{"a":1},"b":[{"a":1},{"a":2}]}'],
    ['names that differ in case or space', '{"a":1,"A":1,"a ":1," a":1}'],
    ['a value that repeats a name', '{"a":"a","b":["a","a"],"c":"\\"a\\":1,\\"a\\":2"}'],
    ['a name after an empty object or array', '{"a":{},"b":[],"c":{"a":[]}}'],
  ])('finds nothing repeated in %s', (_name, text) => {
    expect(repeated(text)).toEqual([]);
    expect(readRequestJson(text).tooMany).toBe(false);
  });

  it('counts the fields as tooManyJsonFields does', () => {
    for (const text of [`[${Array.from({ length: MAX_FIELDS }, () => '0').join(',')}]`, `{"a":[${Array.from({ length: MAX_FIELDS }, () => '{}').join(',')}]}`, '{"a":[[],{}]}']) {
      expect(readRequestJson(text).tooMany, text.slice(0, 20)).toBe(tooManyJsonFields(text));
    }
  });

  it('reads any text without throwing, JSON or not', () => {
    for (const text of ['', '}}]]', '{"a":1,"a"', '{"\\u12":1,"\\u12":2}', '"a":1,"a":2', '{"a" "a" "a"}', '[{"a":1,"a":2', '{"a":1}{"a":1}']) {
      expect(() => readRequestJson(text)).not.toThrow();
    }
  });

  it('compares long names whole (V8 hashes a string over 16,383 characters by its length alone: they are compared by their SHA-256)', () => {
    // 300 distinct names of one length, alike but for their last characters (a Set of them took 200 ms).
    const alike = (i: number) => `${'k'.repeat(16_394)}${String(i).padStart(6, '0')}`;
    const distinct = `{${Array.from({ length: 300 }, (_, i) => `"${alike(i)}":0`).join(',')}}`;
    expect(repeated(distinct)).toEqual([]);
    // The same long name twice, once spelt with an escape; and two that differ only in a lone surrogate.
    const long = 'n'.repeat(2_000_000);
    expect(repeated(`{"${long}":1,"${long.slice(1)}\\u006e":2}`)).toEqual([`/${long}`]);
    expect(repeated(`{"${long}\\ud800":1,"${long}\\ud801":2}`)).toEqual([]);
    // Each repeated, they are named once: their pointers read alike (U+FFFD for the half pair).
    expect(repeated(`{"a\\ud800":1,"a\\ud800":2,"a\\udc00":1,"a\\udc00":2}`)).toEqual(['/a\ufffd']);
  });

  it('lists repeated members while their pointers total 64 KiB, the first whatever its length', () => {
    const pairs = (n: number) => Array.from({ length: n }, (_, i) => `"m${i}":0,"m${i}":1`).join(',');
    expect(repeated(`{"a":{${pairs(1_000)}}}`)).toHaveLength(1_000);
    const long = 'p'.repeat(1_000_000);
    expect(repeated(`{"${long}":{${pairs(1_000)}}}`)).toEqual([`/${long}/m0`]);
    const medium = 'p'.repeat(20_000);
    expect(repeated(`{"${medium}":{${pairs(1_000)}}}`)).toHaveLength(3);
  });

  it('names a repeated member under thousands of levels by its whole pointer', () => {
    const depth = 2_400;
    const text = `{"x":${'{"a":'.repeat(depth)}{"k":1,"k":2}${'}'.repeat(depth)}}`;
    expect(repeated(text)).toEqual([`/x${'/a'.repeat(depth)}/k`]);
  });
});

describe('Vendor JSON', () => {
  it('is not refused for a repeated member: JSON.parse keeps the last, as the vendors own SDKs read it', () => {
    expect(parseVendorJson('{"a":1,"a":2}')).toEqual({ a: 2 });
  });
});
