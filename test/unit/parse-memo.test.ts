import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../shared/seeded-random.js';

// dynalite's expression checks, as the embedded store's thread runs them, with its parsers as
// dynalite ships them and as infra/local/parse-memo.cjs remembers them: every result the same.
const require = createRequire(import.meta.url);
const dynalite = dirname(require.resolve('dynalite'));
const validations = require(join(dynalite, 'validations', 'index.js')) as { validateExpressions(data: Request): string | undefined };
const parsers = ['conditionParser', 'updateParser', 'projectionParser'].map((name) => require(join(dynalite, 'db', `${name}.js`)) as Parser);
const { rememberParses, STAND_IN } = require('../../infra/local/parse-memo.cjs') as {
  rememberParses(parser: Parser): { remembered: number; parsed: number };
  STAND_IN: string;
};

interface Parser {
  parse: (input: string, options: object) => unknown;
}
type Value = Record<string, unknown>;
interface Request {
  ConditionExpression?: string;
  UpdateExpression?: string;
  ProjectionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, Value>;
}

const shipped = parsers.map((parser) => parser.parse);
const counts = parsers.map((parser) => rememberParses(parser));
const remembered = parsers.map((parser) => parser.parse);
/** Puts these parse functions in the parsers dynalite's checks call. */
function use(parse: typeof shipped): void {
  for (const [index, parser] of parsers.entries()) parser.parse = parse[index]!;
}
afterAll(() => use(shipped));

/** What dynalite's checks make of a request (its message, or the parsed expressions they keep on it), with the parsers given. */
function checked(request: Request, parse: typeof shipped) {
  use(parse);
  try {
    const data = structuredClone(request) as Request & Record<string, unknown>;
    const message = validations.validateExpressions(data);
    return { message, updates: data['_updates'], condition: data['_condition'], projection: data['_projection'] };
  } finally {
    use(remembered);
  }
}

const total = () => counts.reduce((sum, count) => ({ remembered: sum.remembered + count.remembered, parsed: sum.parsed + count.parsed }), { remembered: 0, parsed: 0 });

function expectSame(request: Request) {
  const expected = checked(request, shipped);
  expect(checked(request, remembered), JSON.stringify(request)).toEqual(expected);
  return expected;
}

// The gateway's own expressions (shared/storage/accounts.ts: a reserve, a close), with a request's ID in a path.
const reserve = (requestId: string, amount: number, key: string): Request => ({
  UpdateExpression: 'SET balanceMicro = balanceMicro - :amount, reservations.#request = :reservation, rateWindow.#count = rateWindow.#count + :one ADD inFlightSlots :slots',
  ConditionExpression:
    'attribute_exists(accountId) AND balanceMicro >= :amount AND attribute_not_exists(reservations.#request) AND NOT contains(closedRequests, :request) AND NOT inFlightSlots > :slotsLeft AND rateWindow.#start = :start AND rateWindow.#count < :limit AND attribute_not_exists(revokedKeys.#key)',
  ExpressionAttributeNames: { '#request': requestId, '#start': 'start', '#count': 'count', '#key': key },
  ExpressionAttributeValues: {
    ':amount': { N: String(amount) },
    ':reservation': { M: { amountMicro: { N: String(amount) }, at: { N: '1795849154972' }, slots: { N: '1' } } },
    ':request': { S: requestId },
    ':one': { N: '1' },
    ':slots': { N: '1' },
    ':slotsLeft': { N: '63' },
    ':start': { N: '1795849140000' },
    ':limit': { N: '600' },
  },
});

describe('dynalite expression parses, remembered (infra/local/parse-memo.cjs)', () => {
  it("takes a reserve's condition and update from memory for other requests, the same as parsing them", () => {
    const before = total();
    for (let i = 0; i < 20; i++) {
      const result = expectSame(reserve(`01JREQUEST${i}`, 2442 + (i % 2), `key${i % 3}`));
      expect(result.message).toBeUndefined();
      // The request's own ID and value in the parsed condition, not another's or a stand-in.
      expect(JSON.stringify(result.condition)).toContain(`01JREQUEST${i}`);
      expect(JSON.stringify(result.condition)).not.toContain(STAND_IN);
    }
    const after = total();
    // 40 remembered parses (each request's update and condition; the shipped parsers' are not
    // counted): all from memory but the condition's first and the update's first for each of
    // its two amounts (the update's check of its operands reads the amount).
    expect(after.remembered - before.remembered).toBe(40 - 3);
  });

  it('remembers a BETWEEN of two values (its check lists their keys and compares them) and parses it alike for bounds in and out of order', () => {
    const between = (lo: string, hi: string): Request => ({ ConditionExpression: 'a BETWEEN :lo AND :hi', ExpressionAttributeValues: { ':lo': { N: lo }, ':hi': { N: hi } } });
    const before = total();
    for (const [lo, hi] of [
      ['1', '2'],
      ['1', '2'],
      ['3', '2'],
      ['3', '2'],
    ]) {
      expectSame(between(lo!, hi!));
    }
    // The first of each pair learnt, the second from memory: it had never been remembered, and parsed twice each time.
    expect(total().remembered - before.remembered).toBe(1);
    expect(checked(between('3', '2'), remembered).message).toMatch(/BETWEEN operator requires upper bound to be greater/);
  });

  it('does not remember an expression longer than DynamoDB takes, nor one whose parse read a long text of a value; parses both alike', () => {
    const before = total();
    const long: Request = { ConditionExpression: Array.from({ length: 600 }, (_, i) => `a${i} = :v`).join(' OR '), ExpressionAttributeValues: { ':v': { N: '1' } } };
    const text = (length: number, path = 'a'): Request => ({ ConditionExpression: `begins_with(${path}, :v)`, ExpressionAttributeValues: { ':v': { S: 'x'.repeat(length) } } });
    for (let i = 0; i < 3; i++) {
      expectSame(long);
      expectSame(text(300));
    }
    expect(total().remembered - before.remembered).toBe(0);
    // A short one is remembered (of another expression: one that failed to be learnt twice is no longer tried).
    expectSame(text(3, 'b'));
    expectSame(text(3, 'b'));
    expect(total().remembered - before.remembered).toBe(1);
  });

  it.each<[string, Request]>([
    [
      'names of equal values in two paths (they overlap)',
      { UpdateExpression: 'SET #a = :v, #b = :w', ExpressionAttributeNames: { '#a': 'x', '#b': 'x' }, ExpressionAttributeValues: { ':v': { N: '1' }, ':w': { N: '2' } } },
    ],
    [
      'a name whose value is a word of the expression',
      { UpdateExpression: 'SET #a = :v, x = :w', ExpressionAttributeNames: { '#a': 'x' }, ExpressionAttributeValues: { ':v': { N: '1' }, ':w': { N: '2' } } },
    ],
    ['a function of a path and the same path by name', { ConditionExpression: 'contains(a, #a)', ExpressionAttributeNames: { '#a': 'a' } }],
    ['BETWEEN bounds in order', { ConditionExpression: 'a BETWEEN :lo AND :hi', ExpressionAttributeValues: { ':lo': { N: '1' }, ':hi': { N: '2' } } }],
    ['BETWEEN bounds out of order', { ConditionExpression: 'a BETWEEN :lo AND :hi', ExpressionAttributeValues: { ':lo': { N: '3' }, ':hi': { N: '2' } } }],
    ['a valid attribute_type', { ConditionExpression: 'attribute_type(a, :t)', ExpressionAttributeValues: { ':t': { S: 'N' } } }],
    ['an invalid attribute_type', { ConditionExpression: 'attribute_type(a, :t)', ExpressionAttributeValues: { ':t': { S: 'Q' } } }],
    ['begins_with a number', { ConditionExpression: 'begins_with(a, :v)', ExpressionAttributeValues: { ':v': { N: '1' } } }],
    ['an unused name', { ConditionExpression: 'a = :v', ExpressionAttributeNames: { '#unused': 'b' }, ExpressionAttributeValues: { ':v': { N: '1' } } }],
    ['an undefined value', { ConditionExpression: 'a = :missing', ExpressionAttributeValues: { ':v': { N: '1' } } }],
    ['a reserved word', { ConditionExpression: 'name = :v', ExpressionAttributeValues: { ':v': { N: '1' } } }],
    [
      'a path named __proto__',
      { ConditionExpression: '#a.b = :v AND attribute_exists(#a)', ExpressionAttributeNames: { '#a': '__proto__' }, ExpressionAttributeValues: { ':v': { N: '1' } } },
    ],
    ['a name holding a stand-in', { ConditionExpression: '#a = :v', ExpressionAttributeNames: { '#a': `${STAND_IN}0` }, ExpressionAttributeValues: { ':v': { N: '1' } } }],
  ])('parses %s as dynalite does, the second time too', (_, request) => {
    expectSame(request);
    expectSame(request);
  });

  it('answers thousands of random expressions, names and values as dynalite parses them', () => {
    const random = seededRandom(20261128);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const paths = ['a', 'b.c', '#n0', '#n1.x', 'l[0]', '#n2[1].y', 'a.#n0', 'name', '#n1'];
    const values = [':v0', ':v1', ':v2', ':v3'];
    const nameValues = ['a', 'b', 'x', 'c', 'name', 'k1', 'k2', 'status'];
    const valueShapes: Value[] = [
      { N: '1' },
      { N: '2' },
      { S: 'x' },
      { S: 'N' },
      { S: 'Q' },
      { SS: ['a'] },
      { L: [{ N: '1' }] },
      { M: { a: { S: '1' } } },
      { BOOL: true },
      { NULL: true },
      { B: 'AA==' },
    ];
    const path = () => pick(paths);
    const value = () => pick(values);
    const operand = () => (random() < 0.5 ? path() : value());
    const condition = (depth: number): string => {
      const forms = [
        () => `${operand()} ${pick(['=', '<>', '<', '<=', '>', '>='])} ${operand()}`,
        () => `${path()} BETWEEN ${operand()} AND ${operand()}`,
        () => `${path()} IN (${operand()}, ${operand()})`,
        () => `${pick(['attribute_exists', 'attribute_not_exists'])}(${operand()})`,
        () => `attribute_type(${path()}, ${operand()})`,
        () => `${pick(['begins_with', 'contains'])}(${operand()}, ${operand()})`,
        () => `size(${operand()}) > ${operand()}`,
        ...(depth > 0
          ? [
              () => `NOT (${condition(depth - 1)})`,
              () => `(${condition(depth - 1)}) AND ${condition(depth - 1)}`,
              () => `${condition(depth - 1)} OR ${condition(depth - 1)}`,
              () => `((${condition(depth - 1)}))`,
            ]
          : []),
      ];
      return pick(forms)();
    };
    const set = () =>
      pick([
        () => `${path()} = ${operand()}`,
        () => `${path()} = ${operand()} ${pick(['+', '-'])} ${operand()}`,
        () => `${path()} = if_not_exists(${path()}, ${operand()})`,
        () => `${path()} = list_append(${operand()}, ${operand()})`,
      ])();
    const update = () =>
      [
        random() < 0.8 ? `SET ${set()}${random() < 0.5 ? `, ${set()}` : ''}` : '',
        random() < 0.3 ? `REMOVE ${path()}` : '',
        random() < 0.3 ? `ADD ${path()} ${value()}` : '',
        random() < 0.2 ? `DELETE ${path()} ${value()}` : '',
      ]
        .filter(Boolean)
        .join(' ') || `SET ${set()}`;
    const before = total();
    // Few shapes of expression, drawn again and again with other names and values: what memory is for.
    const expressions = Array.from({ length: 40 }, () => ({
      condition: random() < 0.8 ? condition(2) : undefined,
      update: random() < 0.5 ? update() : undefined,
      projection: random() < 0.2 ? `${path()}, ${path()}` : undefined,
    }));
    const outcomes = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const expression = pick(expressions);
      const request: Request = {
        ...(expression.condition ? { ConditionExpression: expression.condition } : {}),
        ...(expression.update ? { UpdateExpression: expression.update } : {}),
        ...(expression.projection ? { ProjectionExpression: expression.projection } : {}),
      };
      const text = Object.values(request).join(' ');
      const names = Object.fromEntries(['#n0', '#n1', '#n2'].filter((name) => text.includes(name) || random() < 0.1).map((name) => [name, pick(nameValues)]));
      const given = Object.fromEntries(values.filter((name) => text.includes(name) || random() < 0.1).map((name) => [name, pick(valueShapes)]));
      if (Object.keys(names).length > 0) request.ExpressionAttributeNames = names;
      if (Object.keys(given).length > 0 && (request.ConditionExpression || request.UpdateExpression)) request.ExpressionAttributeValues = given;
      outcomes.add(expectSame(request).message?.replace(/;.*/, '') ?? 'valid');
    }
    // Valid requests and each kind of refusal were among them, and memory answered many.
    expect(outcomes.has('valid')).toBe(true);
    expect(outcomes.size).toBeGreaterThan(8);
    expect(total().remembered - before.remembered).toBeGreaterThan(400);
  });
});
