import { describe, expect, it } from 'vitest';
import { MAX_VALUE_DEPTH, checkStructuredOutput } from '../../shared/contract/structured-output.js';
import { jsonText } from '../../shared/text/json-text.js';
import { LIMITS } from '../../shared/contract/limits.js';
import { checkSchema } from '../support/response-schema.js';
import { seededRandom } from '../../shared/seeded-random.js';

const { validate } = checkSchema({ type: 'object', properties: { answer: { type: 'string' }, n: { type: 'integer' } }, required: ['answer'], additionalProperties: false });

describe('Function: checkStructuredOutput', () => {
  it.each([
    ['bare JSON', '{"answer":"yes","n":2}'],
    ['a fenced block', '```json\n{"answer":"yes"}\n```'],
    ['prose around one object', 'Here you go: {"answer":"yes"} — hope it helps'],
    ['a fenced block with prose holding braces after it', 'Here:\n```json\n{"answer":"yes"}\n```\nUse {answer} as the key.'],
    ['an object after prose holding braces', 'Schema {answer, n}: {"answer":"yes","n":2}'],
    ['an object before prose holding braces', '{"answer":"yes"}\nNote: {n} is an integer'],
    ['the longest of objects in prose', 'Say {x}, then {"answer":"yes","n":2}, then {y}.'],
    ['the object that conforms, after one in prose that parses', 'Shape: {"n": 0}. Result: {"answer":"yes","n":2}'],
    ['the object that conforms, before an empty one in prose', '{"answer":"yes"} ({} if empty)'],
    ['an object after prose that opens a brace it never closes', 'Sure :-{ here it is: {"answer":"yes"}'],
    ['an object after prose quoting a brace', 'A JSON object starts with "{". Here: {"answer":"yes","n":2}'],
    ['the answer, not a shorter example before it that conforms too', 'Format: {"answer": "<text>"}. Result: {"answer":"yes","n":2}'],
  ])('parses and accepts %s', (_name, output) => {
    expect(checkStructuredOutput(output, validate!)).toMatchObject({ conforms: true, value: { answer: 'yes' } });
  });

  it("reads an object's strings as strings where prose around it holds braces: its braces and escaped quotes are the string's", () => {
    expect(checkStructuredOutput('Result {ok}: {"answer":"a } \\" {","n":1} done {z}', validate!)).toEqual({ conforms: true, value: { answer: 'a } " {', n: 1 } });
    // Read from the end, past prose that never closes its brace: an escaped quote, and an escaped backslash before a quote.
    expect(checkStructuredOutput('Note :-{ {"answer":"a \\" }\\\\","n":1}', validate!)).toEqual({ conforms: true, value: { answer: 'a " }\\', n: 1 } });
  });

  it('names what the first reading that parses breaks where none conforms', () => {
    expect(checkStructuredOutput('Shape: {"n": 0}. Result: {"n": "two"}', validate!)).toEqual({ conforms: false, errors: ["/: must have required property 'answer'"] });
  });

  it('names what breaks the schema: the first rule the output breaks', () => {
    expect(checkStructuredOutput('{"answer":3,"extra":true}', validate!)).toEqual({ conforms: false, errors: ['/: must NOT have additional properties'] });
    expect(checkStructuredOutput('{"answer":3}', validate!)).toEqual({ conforms: false, errors: ['/answer: must be string'] });
  });

  it("checks in linear time an output whose every item fails each branch of a schema's alternatives (collecting every error took 3.2 s for 10 KB)", () => {
    // Six $defs, each an anyOf of the next and the next with a type no value meets: within every limit a request checks.
    const defs: Record<string, unknown> = {};
    for (let i = 0; i < 6; i++) {
      const next = i < 5 ? { $ref: `#/$defs/d${i + 1}` } : { type: 'integer' };
      defs[`d${i}`] = { anyOf: [{ allOf: [next, { type: 'string' }] }, next] };
    }
    const { validate: branching } = checkSchema({
      type: 'object',
      properties: { a: { type: 'array', minItems: 10_000_000, items: { $ref: '#/$defs/d0' } } },
      required: ['a'],
      additionalProperties: false,
      $defs: defs,
    });
    expect(checkStructuredOutput(JSON.stringify({ a: new Array(100_000).fill(null) }), branching!)).toEqual({
      conforms: false,
      errors: ['/a: must NOT have fewer than 10000000 items'],
    });
  });

  it('runs schema patterns in linear time: a 10,000-character output that makes a backtracking engine run forever', () => {
    // Prepare: `(a+)+` backtracks exponentially on a run of a's that does not match; V8 would try
    // 2^9,999 ways before it reached the second alternative. This test never finishes if one comes back.
    const { validate: hostile } = checkSchema(strings({ x: { type: 'string', pattern: '^(a+)+$|!$' } }));
    const output = JSON.stringify({ x: `${'a'.repeat(9_999)}!` });

    // Act
    const checked = checkStructuredOutput(output, hostile!);

    // Assess
    expect(checked).toMatchObject({ conforms: true });
    expect(checkStructuredOutput(JSON.stringify({ x: `${'a'.repeat(9_999)}?` }), hostile!)).toEqual({
      conforms: false,
      errors: ['/x: must match pattern "^(a+)+$|!$"'],
    });
  });

  it('runs patternProperties on the same linear engine', () => {
    const { validate: hostile } = checkSchema({ type: 'object', patternProperties: { '^(a|aa)+$': { type: 'integer' } }, additionalProperties: false });
    expect(checkStructuredOutput(JSON.stringify({ [`${'a'.repeat(9_999)}!`]: 1 }), hostile!)).toMatchObject({ conforms: false });
    expect(checkStructuredOutput(JSON.stringify({ [`${'a'.repeat(9_999)}`]: 1 }), hostile!)).toMatchObject({ conforms: true });
  });

  it.each([
    ['a fence opened and never closed, then spaces', `\`\`\`${' '.repeat(200_000)}x`],
    ['a fence of spaces', `\`\`\`json${' \n'.repeat(100_000)}\`\`\``],
    ['braces only', '{'.repeat(400_000)],
    ['braces closed in reverse', `${'}'.repeat(200_000)}${'{'.repeat(200_000)}`],
  ])('reads an output of %s in one pass and finds no JSON in it', (_name, output) => {
    // A quadratic parse of these (a lazy regex, a search from every brace) takes minutes.
    expect(checkStructuredOutput(output, validate!)).toEqual({ conforms: false, errors: ['the output is not JSON'] });
  });

  it('checks an output nested 100,000 levels deep against a recursive schema without a 500', () => {
    const { validate: recursive } = checkSchema({ type: 'object', properties: { next: { $ref: '#' } }, additionalProperties: false });
    const output = `${'{"next":'.repeat(100_000)}{}${'}'.repeat(100_000)}`;
    expect(checkStructuredOutput(output, recursive!)).toEqual({ conforms: false, errors: ['the output nests too deeply to check'] });
  });

  it('checks and answers an output nested up to 512 levels under an unconstrained member, and no deeper: JSON.stringify of the answer overflowed the stack at about 3,000 (a 500, nothing charged)', () => {
    const { validate: open } = checkSchema({ type: 'object', properties: { a: {} }, required: ['a'], additionalProperties: false });
    const nested = (levels: number) => `{"a":${'['.repeat(levels)}${']'.repeat(levels)}}`;
    const kept = checkStructuredOutput(nested(MAX_VALUE_DEPTH - 1), open!);
    expect(kept.conforms).toBe(true);
    expect(JSON.parse(jsonText(kept))).toEqual(kept);
    for (const levels of [MAX_VALUE_DEPTH, 6_000]) {
      const refused = checkStructuredOutput(nested(levels), open!);
      expect(refused).toEqual({ conforms: false, errors: ['the output nests too deeply to check'] });
    }
  });

  it('says when the output is not JSON at all', () => {
    expect(checkStructuredOutput('I cannot answer that.', validate!)).toEqual({ conforms: false, errors: ['the output is not JSON'] });
  });
});

describe('Functions: checkResponseSchema, then compileResponseSchema', () => {
  it('compiles a schema once, however many requests bring it', () => {
    const schema = () => ({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false });
    const first = checkSchema(schema()).validate;
    const again = checkSchema(schema()).validate;
    expect(first).toBeDefined();
    expect(again).toBe(first);
  });

  it.each([
    ['a backreference', '^(a)\\1$', 'cannot run in linear time'],
    ['a lookahead', '^(?=a)a+$', 'cannot run in linear time (backreferences and lookaround are not supported)'],
    // It had been refused "backreferences and lookaround are not supported", which it has neither of.
    ['counted repetitions nested past 1,000', '^((((a{9}){9}){9}){9})$', 'cannot run in linear time (its counted repetitions, nested, repeat more than 1,000 times)'],
    ['a pattern that is no regex', '^(a$', 'is not a valid regular expression'],
  ])('refuses %s with the pattern named', (_name, pattern, message) => {
    const { errors, validate: none } = checkSchema(strings({ x: { type: 'string', pattern } }));
    expect(none).toBeUndefined();
    expect(errors).toEqual([{ field: '/response_schema/properties/x/pattern', message: expect.stringContaining(message) }]);
  });

  it('refuses a patternProperties key that needs backtracking, named by its key', () => {
    const schema = { type: 'object', patternProperties: { '(x)\\1/': { type: 'string' } }, additionalProperties: false };
    expect(checkSchema(schema).errors).toEqual([{ field: '/response_schema/patternProperties/(x)\\1~1', message: expect.stringContaining('cannot run in linear time') }]);
  });

  it('refuses a schema with more objects than it may compile, naming the limit', () => {
    // The root, its `properties` map and one object a property: limit - 1 properties make limit + 1 objects.
    const many = Object.fromEntries(Array.from({ length: LIMITS.responseSchemaObjects - 1 }, (_, i) => [`p${i}`, { type: 'string' }]));
    expect(checkSchema(strings(many)).errors).toEqual([
      {
        field: '/response_schema',
        message: `holds ${LIMITS.responseSchemaObjects + 1} objects (subschemas); the limit is ${LIMITS.responseSchemaObjects}`,
      },
    ]);
    const fits = Object.fromEntries(Array.from({ length: LIMITS.responseSchemaObjects - 2 }, (_, i) => [`p${i}`, { type: 'string' }]));
    expect(checkSchema(strings(fits)).errors).toEqual([]);
  });

  /** `links` $defs, each an anyOf of two references to the next: 2^links paths to the last, in about 3 objects a link. */
  const doubling = (links: number) => ({
    type: 'object',
    properties: { x: { $ref: '#/$defs/a0' } },
    required: ['x'],
    additionalProperties: false,
    $defs: Object.fromEntries([
      ...Array.from({ length: links }, (_, i) => [`a${i}`, { anyOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] }]),
      [`a${links}`, { type: 'string' }],
    ]),
  });

  it('refuses a schema whose references multiply the paths an output is checked along past the limit (a check of {"x": null} took 5 s at 22 links), naming the limit', () => {
    expect(checkSchema(doubling(22)).errors).toEqual([
      { field: '/response_schema', message: expect.stringMatching(new RegExp(`^expands to more than ${LIMITS.responseSchemaExpanded} subschemas through its \\$refs`)) },
    ]);
    // Eleven links (8,191 subschemas along the references) stay within it.
    const { errors, validate } = checkSchema(doubling(11));
    expect(errors).toEqual([]);
    expect(validate?.({ x: null })).toBe(false);
    expect(validate?.({ x: 'a string' })).toBe(true);
  });

  it('takes a recursive schema and a definition referenced from many places: what an output of any depth is checked against stays its own', () => {
    const tree = {
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } },
      required: ['name', 'children'],
      additionalProperties: false,
    };
    expect(checkSchema(tree).errors).toEqual([]);
    const address = { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } }, required: ['street', 'city'], additionalProperties: false };
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`a${i}`, { $ref: '#/$defs/address' }]));
    expect(checkSchema({ type: 'object', properties: many, additionalProperties: false, $defs: { address } }).errors).toEqual([]);
  });

  it('counts the objects a $ref can reach outside any keyword it knows', () => {
    const hidden = { type: 'object', properties: { a: { $ref: '#/hidden/0' } }, additionalProperties: false, hidden: [] as unknown[] };
    for (let i = 0; i < LIMITS.responseSchemaObjects; i++) hidden.hidden.push({ type: 'string' });
    expect(checkSchema(hidden).errors[0]?.message).toContain(`the limit is ${LIMITS.responseSchemaObjects}`);
  });

  it('refuses a $ref to an object level it did not check (beneath a keyword it does not know), and follows those to what it checked', () => {
    const loose = { type: 'object', properties: { b: { type: 'string' } } };
    const UNCHECKED = expect.stringContaining('must point to a subschema the gateway checks');
    const refused: [string, Record<string, unknown>, string][] = [
      ['a pointer beneath an unknown keyword', { ...strings({ a: { $ref: '#/x/y' } }), x: { y: loose } }, '/response_schema/properties/a/$ref'],
      ['the same, percent-encoded', { ...strings({ a: { $ref: '#/x%20z/y' } }), 'x z': { y: loose } }, '/response_schema/properties/a/$ref'],
      ['an anchor declared there', { ...strings({ a: { $ref: '#loose' } }), x: { ...loose, $anchor: 'loose' } }, '/response_schema/properties/a/$ref'],
      [
        'a resource declared there',
        { ...strings({ a: { $ref: 'https://schemas.test/loose' } }), x: { ...loose, $id: 'https://schemas.test/loose' } },
        '/response_schema/properties/a/$ref',
      ],
      [
        'a pointer into a checked resource, beneath its unknown keyword',
        { ...strings({ a: { $ref: 'https://schemas.test/r#/x' } }), $defs: { r: { $id: 'https://schemas.test/r', type: 'string', x: loose } } },
        '/response_schema/properties/a/$ref',
      ],
      ['data, not a schema', { ...strings({ a: { $ref: '#/properties/b/enum/0' }, b: { enum: [loose] } }) }, '/response_schema/properties/a/$ref'],
      [
        // "c.json" from within "dir/b.json" is dir/c.json, the hidden one, not $defs' c.json.
        'a relative $id resolved against its base, as ajv resolves it',
        {
          ...strings({ b: { $ref: '#/$defs/B' } }),
          $defs: { B: { $id: 'dir/b.json', $ref: 'c.json' }, C: { $id: 'c.json', type: 'string' } },
          'x-hidden': { ...loose, $id: 'dir/c.json' },
        },
        '/response_schema/$defs/B/$ref',
      ],
    ];
    for (const [name, schema, field] of refused) expect(checkSchema(schema).errors, name).toEqual([{ field, message: UNCHECKED }]);

    const item = strings({ c: { type: 'string' } });
    const followed: [string, Record<string, unknown>][] = [
      ['$defs', { ...strings({ a: { $ref: '#/$defs/item' } }), $defs: { item } }],
      ['definitions, its name escaped', { ...strings({ a: { $ref: '#/definitions/i~1t%20m' } }), definitions: { 'i/t m': item } }],
      ['the root, recursively', strings({ a: { anyOf: [{ $ref: '#' }, { type: 'null' }] } })],
      ['an anchor in $defs', { ...strings({ a: { $ref: '#item' } }), $defs: { item: { ...item, $anchor: 'item' } } }],
      [
        'a resource in $defs, and a pointer within it',
        {
          ...strings({ a: { $ref: 'https://schemas.test/item' }, b: { $ref: 'https://schemas.test/item#/properties/c' } }),
          $defs: { item: { ...item, $id: 'https://schemas.test/item' } },
        },
      ],
      ['the root by its own $id', { $id: 'https://schemas.test/s.json', ...strings({ a: { $ref: 'https://schemas.test/s.json#/$defs/item' } }), $defs: { item } }],
      ['an anchor under a root $id', { $id: 'https://schemas.test/s.json', ...strings({ a: { $ref: '#thing' } }), $defs: { item: { ...item, $anchor: 'thing' } } }],
      [
        'a relative $id referenced by its absolute URI',
        { $id: 'https://schemas.test/s.json', ...strings({ a: { $ref: 'https://schemas.test/item.json' } }), $defs: { item: { ...item, $id: 'item.json' } } },
      ],
    ];
    for (const [name, schema] of followed) expect(checkSchema(schema).errors, name).toEqual([]);
  });

  it('walks `dependencies` too, which ajv still applies: an object level in it needs additionalProperties false', () => {
    const schema = { ...strings({ a: { type: 'string' } }), dependencies: { a: { properties: { b: { type: 'string' } } }, c: ['a'] } };
    expect(checkSchema(schema).errors).toEqual([
      { field: '/response_schema/dependencies/a/additionalProperties', message: 'must be false at every object level of response_schema' },
    ]);
  });

  it('refuses a property named __proto__, which the validator would leave unchecked', () => {
    expect(checkSchema(strings({ __proto__x: { type: 'string' }, ['__proto__']: { type: 'string' } })).errors).toEqual([
      { field: '/response_schema/properties/__proto__', message: 'cannot be checked by the gateway: rename the property' },
      { field: '/response_schema/required/1', message: 'cannot be checked by the gateway: rename the property' },
    ]);
  });

  it('refuses enums past the limit at the enum that crosses it', () => {
    const half = Math.ceil((LIMITS.responseSchemaEnumValues + 1) / 2);
    const values = Array.from({ length: half }, (_, i) => i);
    const schema = strings({ a: { enum: values }, b: { enum: values } });
    expect(checkSchema(schema).errors).toEqual([
      { field: '/response_schema/properties/b/enum', message: `brings the enum values of response_schema past ${LIMITS.responseSchemaEnumValues}` },
    ]);
  });

  it('refuses a pattern past its length and a repetition past its count', () => {
    const schema = strings({
      long: { type: 'string', pattern: 'a'.repeat(LIMITS.responseSchemaPatternChars + 1) },
      repeat: { type: 'string', pattern: `^a{1,${LIMITS.responseSchemaPatternRepeat + 1}}$` },
    });
    expect(checkSchema(schema).errors).toEqual([
      { field: '/response_schema/properties/long/pattern', message: `must be at most ${LIMITS.responseSchemaPatternChars} characters` },
      { field: '/response_schema/properties/repeat/pattern', message: expect.stringContaining(`patterns past ${LIMITS.responseSchemaPatternRepeat}`) },
    ]);
  });

  it('counts a pattern in characters, an emoji one, as the other limits count (200 emoji had been refused as over 256)', () => {
    const emoji = '\u{1F600}';
    expect(checkSchema(strings({ a: { type: 'string', pattern: emoji.repeat(LIMITS.responseSchemaPatternChars) } })).errors).toEqual([]);
    expect(checkSchema(strings({ a: { type: 'string', pattern: emoji.repeat(LIMITS.responseSchemaPatternChars + 1) } })).errors).toEqual([
      { field: '/response_schema/properties/a/pattern', message: `must be at most ${LIMITS.responseSchemaPatternChars} characters` },
    ]);
  });

  it('checks uniqueItems over items of every kind, in one pass: objects in any key order, prefix items ajv\'s own check skipped, and "__proto__" (duplicates of each had conformed, or the schema been refused)', () => {
    const unique = (array: Record<string, unknown>) => checkSchema(strings({ v: { type: 'array', uniqueItems: true, ...array } }));
    const verdicts = (array: Record<string, unknown>, outputs: Record<string, boolean>) => {
      const { errors, validate } = unique(array);
      expect(errors, JSON.stringify(array)).toEqual([]);
      for (const [output, conforms] of Object.entries(outputs))
        expect(checkStructuredOutput(`{"v":${output}}`, validate!), `${JSON.stringify(array)} ${output}`).toMatchObject({ conforms });
    };
    const object = strings({ x: { type: 'integer' }, y: { type: 'string' } });
    verdicts({ items: object }, { '[{"x":1,"y":"a"},{"y":"a","x":1}]': false, '[{"x":1,"y":"a"},{"x":2,"y":"a"}]': true });
    verdicts({ items: { type: 'string', enum: ['__proto__', 'news'] } }, { '["__proto__","__proto__"]': false, '["__proto__","news"]': true });
    verdicts({ prefixItems: [{ type: 'number' }, { type: 'number' }], items: { type: 'string' } }, { '[1,1.0]': false, '[1,2,"a","a"]': false, '[1,2,"a","b"]': true });
    verdicts({ prefixItems: [{ type: 'null' }, { type: 'boolean', nullable: true }], items: { type: 'string' } }, { '[null,null]': false, '[null,true]': true });
    verdicts({ prefixItems: [{ enum: [1, 'a'] }, { const: 1 }], items: { type: 'string' } }, { '[1,1]': false, '["a",1]': true });
    verdicts({ items: { type: ['number', 'string'] } }, { '[1,"1"]': true, '[-0,0]': false, '[[1,{"a":[2]}],[1,{"a":[2]}]]': false });
    // Numbers past a double's range are no null, and not each other (keyed by their JSON, all three had been one).
    verdicts({}, { '[1e400,-1e400,null]': true, '[[1e400],[null]]': true, '[1e400,1e401]': false });
    // Nested arrays, each unique: every level's items numbered once an output.
    const nested = { $ref: '#/$defs/a' };
    const { errors, validate } = checkSchema({
      ...strings({ v: nested }),
      $defs: { a: { type: 'array', uniqueItems: true, prefixItems: [nested], items: { type: 'string' } } },
    });
    expect(errors).toEqual([]);
    expect(checkStructuredOutput(`{"v":${'['.repeat(200)}[],"a","b"${']'.repeat(200)}}`, validate!)).toMatchObject({ conforms: true });
    expect(checkStructuredOutput(`{"v":${'['.repeat(200)}[],"a","a"${']'.repeat(200)}}`, validate!)).toMatchObject({ conforms: false });
  });

  it('checks uniqueItems over 100,000 objects in a linear pass (ajv compared them pairwise)', () => {
    const { validate } = checkSchema(strings({ v: { type: 'array', uniqueItems: true, items: strings({ n: { type: 'integer' } }) } }));
    const items = Array.from({ length: 100_000 }, (_, n) => ({ n }));
    expect(checkStructuredOutput(JSON.stringify({ v: items }), validate!)).toMatchObject({ conforms: true });
    expect(checkStructuredOutput(JSON.stringify({ v: [...items, { n: 5 }] }), validate!)).toMatchObject({
      conforms: false,
      errors: ['/v: must NOT have duplicate items (items ## 5 and 100000 are identical)'],
    });
  });

  it('refuses dependentRequired names past the limit, all lists together, at the list that crosses it: a list compiles in the square of its names (1,500 had held the schema thread past its deadline)', () => {
    const names = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    const half = Math.ceil((LIMITS.responseSchemaDependentNames + 1) / 2);
    const schema = { ...strings({ a: { type: 'string' }, b: { type: 'string' } }), dependentRequired: { a: names(half, 'p'), b: names(half, 'q') } };
    expect(checkSchema(schema).errors).toEqual([
      { field: '/response_schema/dependentRequired/b', message: `brings the names of response_schema's dependentRequired lists past ${LIMITS.responseSchemaDependentNames}` },
    ]);
    const draft7 = { ...strings({ a: { type: 'string' } }), dependencies: { a: names(LIMITS.responseSchemaDependentNames + 1, 'p') } };
    expect(checkSchema(draft7).errors).toEqual([{ field: '/response_schema/dependencies/a', message: expect.stringContaining('dependentRequired lists past') }]);
    const atLimit = { ...strings({ a: { type: 'string' } }), dependentRequired: { a: names(LIMITS.responseSchemaDependentNames, 'p') } };
    expect(checkSchema(atLimit).errors).toEqual([]);
  });

  it('counts the JSON size in UTF-8 bytes, as its message says (65,000 characters of CJK text are 195,000 bytes)', () => {
    const schema = strings({ a: { type: 'string', description: '漢'.repeat(30_000) } });
    expect(checkSchema(schema).errors).toEqual([{ field: '/response_schema', message: `must be at most ${LIMITS.responseSchemaBytes} bytes of JSON` }]);
  });

  it('checks multipleOf exactly as decimals read it: 0.07, 19.99 and 1234567.89 are multiples of 0.01 (in binary floating point, or within a tolerance, some were not), 0.070000000001 is not', () => {
    const { validate: cents } = checkSchema(strings({ price: { type: 'number', multipleOf: 0.01 } }));
    for (const price of ['0.07', '19.99', '4.35', '1.1', '1234567.89', '99999999.99', '-0.03', '0', '1e21'])
      expect(checkStructuredOutput(`{"price":${price}}`, cents!), price).toMatchObject({ conforms: true });
    for (const price of ['0.075', '0.070000000001', '1e-7'])
      expect(checkStructuredOutput(`{"price":${price}}`, cents!), price).toMatchObject({ conforms: false, errors: ['/price: must be multiple of 0.01'] });
    const { validate: whole } = checkSchema(strings({ n: { type: 'number', multipleOf: 1 } }));
    expect(checkStructuredOutput('{"n":2.0000000005}', whole!)).toMatchObject({ conforms: false });
    expect(checkStructuredOutput('{"n":1000000000000}', whole!)).toMatchObject({ conforms: true });
    const { validate: tiny } = checkSchema(strings({ n: { type: 'number', multipleOf: 1e-7 } }));
    expect(checkStructuredOutput('{"n":0.0000003}', tiny!)).toMatchObject({ conforms: true });
    // A step past what a double scales exactly: whole numbers too are read as decimals (0 had been no multiple of 5e-324).
    const { validate: least } = checkSchema(strings({ n: { type: 'number', multipleOf: 5e-324 } }));
    for (const n of ['0', '1', '0.07', '-3']) expect(checkStructuredOutput(`{"n":${n}}`, least!), n).toMatchObject({ conforms: true });
    // A number past what a double holds (read as Infinity) is no number of the schema's: it had conformed, answered as null.
    const { validate: number } = checkSchema(strings({ n: { type: 'number' } }));
    expect(checkStructuredOutput('{"n":1e400}', number!)).toMatchObject({ conforms: false });
    // Past what a double holds, read as Infinity: no multiple, and the next reading is tried (an internal error had ended the check).
    expect(checkStructuredOutput('{"price":1e400}', cents!)).toMatchObject({ conforms: false, errors: ['/price: must be number'] });
    expect(checkStructuredOutput('Not {"price":-1e400}, but {"price":0.05}', cents!)).toMatchObject({ conforms: true, value: { price: 0.05 } });
    // Both ways of checking, the doubles' and BigInt's, at their edge.
    const { validate: sixteenth } = checkSchema(strings({ n: { type: 'number', multipleOf: 0.0000000000001 } }));
    for (const [n, conforms] of [
      ['12.0000000000001', true],
      ['123.0000000000001', true],
      ['123.00000000000015', false],
    ] as const)
      expect(checkStructuredOutput(`{"n":${n}}`, sixteenth!), n).toMatchObject({ conforms });
  });

  it('checks multipleOf as a reckoning in fractions does, over 8,000 seeded numbers and 16 steps (its quick path in doubles and its BigInt one alike)', () => {
    /** A number as the fraction its shortest decimal writes. */
    const fraction = (x: number): [bigint, bigint] => {
      const [, sign, whole, part = '', exponent = '0'] = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x))!;
      const digits = BigInt(`${sign}${whole}${part}`);
      const power = Number(exponent) - part.length;
      return power >= 0 ? [digits * 10n ** BigInt(power), 1n] : [digits, 10n ** BigInt(-power)];
    };
    const random = seededRandom(20261128);
    for (const step of [0.01, 0.1, 1, 2, 0.25, 5, 1e-7, 1e-15, 3e-16, 1e15, 1e20, 5e-324, 0.3, 7, 1.5, 1e-320]) {
      const { validate } = checkSchema(strings({ n: { type: 'number', multipleOf: step } }));
      const [c, d] = fraction(step);
      for (let i = 0; i < 500; i++) {
        const kind = i % 4;
        const x =
          kind === 0
            ? Math.round(random() * 1e6) * step
            : kind === 1
              ? Math.round((random() - 0.5) * 2 ** (random() * 62))
              : kind === 2
                ? Number((random() * 10 ** Math.floor(random() * 30 - 10)).toPrecision(1 + Math.floor(random() * 16)))
                : Math.round(random() * 1e9) / 100;
        const [a, b] = fraction(x);
        expect(checkStructuredOutput(JSON.stringify({ n: x }), validate!).conforms, `${x} multipleOf ${step}`).toBe((a * d) % (c * b) === 0n);
      }
    }
  });

  it('refuses one pattern more than a schema may hold', () => {
    const patterned = Object.fromEntries(Array.from({ length: LIMITS.responseSchemaPatterns + 1 }, (_, i) => [`p${i}`, { type: 'string', pattern: `^x${i}$` }]));
    expect(checkSchema(strings(patterned)).errors).toEqual([
      {
        field: `/response_schema/properties/p${LIMITS.responseSchemaPatterns}/pattern`,
        message: `is one pattern more than the ${LIMITS.responseSchemaPatterns} a response_schema may hold`,
      },
    ]);
  });

  it('still refuses an invalid schema it has not compiled', () => {
    expect(checkSchema({ type: 'object', properties: {} }).errors).toEqual([
      { field: '/response_schema/additionalProperties', message: 'must be false at every object level of response_schema' },
    ]);
  });
});

/** An object schema with these properties, all required, nothing else allowed. */
function strings(properties: Record<string, unknown>): Record<string, unknown> {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}
