import { RE2JS } from 're2js';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { loadAjv } from '../../shared/contract/ajv.js';
import { compileResponseSchema, validatorOf } from '../../shared/contract/schema-compile.js';

const compile = (schema: unknown) => compileResponseSchema(JSON.stringify(schema), '/response_schema');
const ID = 'https://acme.example/schemas/merger-with-globex';

describe("A caller's response_schema leaves nothing behind in a shared compiler", () => {
  beforeAll(loadAjv);

  it("a nested $id of one request's schema is unknown to the next request's (another tenant's)", () => {
    const b = { $id: ID, type: 'object', additionalProperties: false, properties: { n: { type: 'string' } } };
    expect(compile(b).errors).toEqual([]);
    // Tenant A: a subschema carries the $id.
    expect(compile({ type: 'object', additionalProperties: false, properties: { p: { $id: ID, type: 'string' } } }).errors).toEqual([]);
    // Tenant B, a new schema text (no cache hit): compiled as if A had sent nothing.
    expect(compile({ ...b, properties: { n: { type: 'string' }, m: { type: 'number' } } }).errors).toEqual([]);
    // And a $ref to A's nested $id does not reach A's subschema.
    expect(compile({ type: 'object', additionalProperties: false, properties: { q: { $ref: ID } } }).errors[0]?.message).toContain(`can't resolve reference ${ID}`);
  });

  it('a $ref to a nested $id within one schema still works', () => {
    const id = 'https://acme.example/schemas/code';
    const { errors, validate } = compile({
      type: 'object',
      additionalProperties: false,
      properties: { code: { $id: id, type: 'string', pattern: '^[A-Z]{3}$' }, again: { $ref: id } },
    });
    expect(errors).toEqual([]);
    expect(validate!({ code: 'ABC', again: 'XYZ' })).toBe(true);
    expect(validate!({ code: 'ABC', again: 'xyz' })).toBe(false);
  });

  it('a $schema is one of the 2020-12 meta-schemas, and one that is not is refused without being resolved', () => {
    const schema = { type: 'object', additionalProperties: false, properties: { a: { type: 'string' } } };
    expect(compile({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...schema }).errors).toEqual([]);
    expect(compile({ $schema: 'https://json-schema.org/draft/2020-12/schema#', ...schema }).errors).toEqual([]);
    for (const $schema of ['http://json-schema.org/draft-07/schema#', 'https://json-schema.org/draft/2020-12/schema#/$defs/x', 'constructor']) {
      expect(compile({ $schema, ...schema }).errors).toEqual([{ field: '/response_schema', message: `is not a valid JSON Schema: no schema with key or ref "${$schema}"` }]);
    }
    expect(compile({ $schema: 5, ...schema }).errors).toEqual([{ field: '/response_schema', message: 'is not a valid JSON Schema: $schema must be a string' }]);
  });

  it("a schema the meta-schema refuses is refused with ajv's message", () => {
    expect(compile({ type: 'object', additionalProperties: false, properties: { a: { type: 'strin' } } }).errors[0]?.message).toMatch(
      /^is not a valid JSON Schema: schema is invalid: data\/properties\/a\/type must be equal to one of the allowed values/,
    );
  });

  it("checks an account's outputs with the validator compiled for it, however many new schemas another account sends", () => {
    const schema = (n: number) => JSON.stringify({ type: 'object', additionalProperties: false, properties: { a: { type: 'string', maxLength: n } } });
    const kept = schema(1_000_000 + (Date.now() % 1_000));
    const compiled = compileResponseSchema(kept, '/response_schema', 'account-a').validate;
    expect(compiled).toBeDefined();
    // 150 new schemas of another account: past every cache's 100, within its own quarter for it.
    for (let i = 0; i < 150; i++) compileResponseSchema(schema(i + 1), '/response_schema', 'flooding');
    expect(validatorOf(kept, 'account-a').validate).toBe(compiled);
    // A check that names no account (the workflow's) has only what the flood left: compiled again.
    expect(validatorOf(kept).validate).not.toBe(compiled);
  });

  it("keeps one account's compiled validators and patterns from serving another's", () => {
    const json = JSON.stringify({ type: 'object', additionalProperties: false, properties: { a: { type: 'string', pattern: `^x{${Date.now() % 97}}y$` } } });
    const compiles = vi.spyOn(RE2JS, 'compile');
    try {
      const a = compileResponseSchema(json, '/response_schema', 'account-a').validate;
      const patternsOfA = compiles.mock.calls.length;
      expect(patternsOfA).toBeGreaterThan(0);
      expect(compileResponseSchema(json, '/response_schema', 'account-a').validate).toBe(a);
      expect(compiles.mock.calls.length).toBe(patternsOfA);

      const b = compileResponseSchema(json, '/response_schema', 'account-b').validate;
      expect(b).toBeDefined();
      expect(b).not.toBe(a);
      expect(compiles.mock.calls.length).toBe(2 * patternsOfA);
    } finally {
      compiles.mockRestore();
    }
  });
});
