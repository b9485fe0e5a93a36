import { describe, expect, it } from 'vitest';
import { checkStructuredOutput } from '../../shared/compare/structured-output.js';
import { checkResponseSchema } from '../../shared/contract/response-schema.js';

const { validate } = checkResponseSchema(
  { type: 'object', properties: { answer: { type: 'string' }, n: { type: 'integer' } }, required: ['answer'], additionalProperties: false },
  '/response_schema',
);

describe('Function: checkStructuredOutput', () => {
  it.each([
    ['bare JSON', '{"answer":"yes","n":2}'],
    ['a fenced block', '```json\n{"answer":"yes"}\n```'],
    ['prose around one object', 'Here you go: {"answer":"yes"} — hope it helps'],
  ])('parses and accepts %s', (_name, output) => {
    expect(checkStructuredOutput(output, validate!)).toMatchObject({ conforms: true, value: { answer: 'yes' } });
  });

  it('names what breaks the schema', () => {
    expect(checkStructuredOutput('{"answer":3,"extra":true}', validate!)).toEqual({
      conforms: false,
      errors: ['/: must NOT have additional properties', '/answer: must be string'],
    });
  });

  it('says when the output is not JSON at all', () => {
    expect(checkStructuredOutput('I cannot answer that.', validate!)).toEqual({ conforms: false, errors: ['the output is not JSON'] });
  });
});

describe('Function: checkResponseSchema', () => {
  it('compiles a schema once, however many requests bring it', () => {
    const schema = () => ({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false });
    const first = checkResponseSchema(schema(), '/response_schema').validate;
    const again = checkResponseSchema(schema(), '/response_schema').validate;
    expect(first).toBeDefined();
    expect(again).toBe(first);
  });

  it('still refuses an invalid schema it has not compiled', () => {
    expect(checkResponseSchema({ type: 'object', properties: {} }, '/response_schema').errors).toEqual([
      { field: '/response_schema/additionalProperties', message: 'must be false at every object level of response_schema' },
    ]);
  });
});
