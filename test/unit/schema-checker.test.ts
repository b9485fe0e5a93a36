import { afterEach, describe, expect, it } from 'vitest';
import { LIMITS } from '../../shared/contract/limits.js';
import { compileRequestSchema, SchemaChecker, schemaChecker } from '../../shared/contract/schema-checker.js';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { validateContract, type ApiEvent } from '../../shared/http/middleware.js';
import { COSTLY_SCHEMAS, object } from '../support/costly-schemas.js';

const checkers: SchemaChecker[] = [];
afterEach(async () => {
  await Promise.all(checkers.splice(0).map((checker) => checker.close()));
});
function newChecker(options: ConstructorParameters<typeof SchemaChecker>[0] = {}): SchemaChecker {
  const checker = new SchemaChecker(options);
  checkers.push(checker);
  return checker;
}

const SMALL = JSON.stringify(object({ a: { type: 'string', pattern: '^a+$' } }));
let salt = Date.now();

describe('Class: SchemaChecker', () => {
  it.each(Object.keys(COSTLY_SCHEMAS))('keeps the main thread answering timers while the schema thread compiles the costliest schema the budget admits (%s)', async (name) => {
    // Prepare: a thread already started (its start is not what is measured), a schema it has never seen.
    const checker = newChecker();
    expect(await checker.compile(SMALL)).toEqual([]);
    const request = validatePromptRequest({ prompt: 'x', models: ['fam_c-5.4'], response_schema: COSTLY_SCHEMAS[name]!(salt++, LIMITS.responseSchemaObjects) });
    let ticks = 0;
    let compiling = true;
    const tick = () => {
      ticks++;
      if (compiling) setImmediate(tick);
    };
    setImmediate(tick);

    // Act: compiled on the main thread, this resolved before any timer could run.
    await compileRequestSchema(request, checker);
    compiling = false;

    // Assess
    expect(ticks).toBeGreaterThan(0);
  });

  it('compiles and checks on the thread: a refusal names the field, an output gets its verdict', async () => {
    const checker = newChecker();
    expect(await checker.compile(JSON.stringify(object({ x: { type: 'strin' } })))).toEqual([
      { field: '/response_schema', message: expect.stringContaining('is not a valid JSON Schema') },
    ]);
    expect(await checker.compile(JSON.stringify(object({ x: { type: 'string', pattern: '^(a)\\1$' } })))).toEqual([
      { field: '/response_schema/properties/x/pattern', message: expect.stringContaining('cannot run in linear time') },
    ]);
    expect(await checker.check('```json\n{"a":"aaa"}\n```', SMALL)).toEqual({ conforms: true, value: { a: 'aaa' } });
    expect(await checker.check('{"a":"b"}', SMALL)).toEqual({ conforms: false, errors: ['/a: must match pattern "^a+$"'] });
  });

  it('checks properties named as members every object inherits as any other: an output without them does not conform', async () => {
    const checker = newChecker();
    for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
      const schema = JSON.stringify(object({ [name]: { type: 'string' } }));
      expect(await checker.compile(schema)).toEqual([]);
      expect(await checker.check('{}', schema), name).toMatchObject({ conforms: false, errors: [expect.stringContaining(`must have required property '${name}'`)] });
      expect(await checker.check(JSON.stringify({ [name]: 5 }), schema), name).toMatchObject({ conforms: false });
      expect(await checker.check(JSON.stringify({ [name]: 'yes' }), schema), name).toMatchObject({ conforms: true });
    }
  });

  it("answers a schema it compiled before at once, never queued behind a job that keeps the thread busy (another request's schema)", async () => {
    const checker = newChecker({ deadlineMs: 1_000, faults: true });
    const schema = JSON.stringify(object({ n: { type: 'integer' } }));
    expect(await checker.compile(schema)).toEqual([]);
    // The thread hangs on a job until its deadline; the same schema again is answered first.
    const busy = checker.fault('hang').then(
      () => 'busy job answered',
      () => 'busy job failed',
    );
    const again = checker.compile(schema).then((errors) => (errors.length === 0 ? 'compiled' : 'refused'));
    expect(await Promise.race([again, busy])).toBe('compiled');
    expect(await busy).toBe('busy job failed');
    // A schema it refused is asked again: refusals are not remembered.
    const refused = JSON.stringify(object({ n: { type: 'string', pattern: '(' } }));
    expect(await checker.compile(refused)).not.toEqual([]);
  });

  it('ends a thread whose job outruns the deadline: that job fails, the jobs behind it are answered by a new thread', async () => {
    // Prepare: a job that never ends, as a runaway validation would.
    const checker = newChecker({ faults: true, deadlineMs: 1_000 });
    expect(await checker.compile(SMALL)).toEqual([]);

    // Act
    const runaway = checker.fault('hang');
    const behind = checker.check('{"a":"aa"}', SMALL);

    // Assess
    await expect(runaway).rejects.toThrow('ran past its 1000 ms deadline');
    expect(await behind).toEqual({ conforms: true, value: { a: 'aa' } });
    expect(checker.started).toBe(2);
  });

  it('starts a new thread after one dies mid-check: the check it was running says it could not be checked, the next one works', async () => {
    const checker = newChecker({ faults: true });
    expect(await checker.compile(SMALL)).toEqual([]);

    await expect(checker.fault('crash')).rejects.toThrow('the schema thread stopped (exit code 1)');
    const killed = checker.check('{"a":"aa"}', SMALL);
    await checker.close();

    expect(await killed).toEqual({ conforms: false, errors: ['the output could not be checked: the schema thread was closed'] });
    expect(await checker.check('{"a":"aa"}', SMALL)).toEqual({ conforms: true, value: { a: 'aa' } });
    expect(checker.started).toBe(3);
  });

  it('answers a job that throws on the thread, which lives on to answer the next', async () => {
    const checker = newChecker({ faults: true });

    expect(await checker.fault('throw')).toEqual({ conforms: false, errors: ['the output could not be checked: a job that throws'] });
    expect(await checker.check('{"a":"aa"}', SMALL)).toEqual({ conforms: true, value: { a: 'aa' } });
    expect(checker.started).toBe(1);
  });

  it.each([[5], [true], [[]], [{}]])('refuses a schema whose root identifier is %j, not a string, with a 400 naming that field, the thread living on', async (id) => {
    const checker = newChecker();
    const request = validatePromptRequest({ prompt: 'x', models: ['fam_c-5.4'], response_schema: { $id: id, ...object({ a: { type: 'string' } }) } });

    await expect(compileRequestSchema(request, checker)).rejects.toMatchObject({ status: 400, details: [{ field: '/response_schema/$id', message: 'must be a string' }] });
    expect(await checker.compile(SMALL)).toEqual([]);
    expect(checker.started).toBe(1);
  });

  it("takes each account's compiles and the output checks in turn: one account's stream of new schemas delays another's by one of its jobs, not all", async () => {
    const checker = newChecker();
    expect(await checker.compile(SMALL, 'account-a')).toEqual([]);
    const answered: string[] = [];
    const fresh = () => JSON.stringify(object({ a: { type: 'string', maxLength: salt++ } }));
    const jobs = [
      ...Array.from({ length: 8 }, (_, i) => checker.compile(fresh(), 'flooding').then(() => answered.push(`flood ${i}`))),
      checker.compile(fresh(), 'account-a').then(() => answered.push('account-a')),
      checker.check('{"a":"aa"}', SMALL).then(() => answered.push('check')),
    ];
    await Promise.all(jobs);
    // The first of the flood was running; then one more of it, one of each other lane's, and the rest of the flood.
    expect(answered).toEqual(['flood 0', 'flood 1', 'account-a', 'check', 'flood 2', 'flood 3', 'flood 4', 'flood 5', 'flood 6', 'flood 7']);
    expect(checker.started).toBe(1);
  });

  it("takes each account's output checks in its lane: one account's many checks delay another's by one of its jobs, not all", async () => {
    const checker = newChecker();
    expect(await checker.compile(SMALL, 'flooding')).toEqual([]);
    expect(await checker.compile(SMALL, 'account-b')).toEqual([]);
    const answered: string[] = [];
    const jobs = [
      ...Array.from({ length: 6 }, (_, i) => checker.check('{"a":"aa"}', SMALL, 'flooding').then(() => answered.push(`flood ${i}`))),
      checker.check('{"a":"aa"}', SMALL, 'account-b').then(() => answered.push('account-b')),
    ];
    await Promise.all(jobs);
    expect(answered).toEqual(['flood 0', 'flood 1', 'account-b', 'flood 2', 'flood 3', 'flood 4', 'flood 5']);
  });

  it("answers a check still waiting at its request's deadline then, as not checked, and takes it out of its lane", async () => {
    const checker = newChecker({ deadlineMs: 2_000, faults: true });
    expect(await checker.compile(SMALL)).toEqual([]);
    // The thread hangs on a job until its own deadline; the check behind it has its request's, sooner.
    const busy = checker.fault('hang').then(
      () => 'busy job answered',
      () => 'busy job failed',
    );
    const late = checker.check('{"a":"aa"}', SMALL, 'account-a', Date.now() + 50);
    expect(await Promise.race([late, busy])).toEqual({
      conforms: false,
      errors: ["the output could not be checked: the request's deadline passed before the check was done"],
    });
    expect(await busy).toBe('busy job failed');
    // Withdrawn: the new thread's first job is the next one asked, answered as usual.
    expect(await checker.check('{"a":"aa"}', SMALL)).toEqual({ conforms: true, value: { a: 'aa' } });
    expect(checker.started).toBe(2);
  });

  it("remembers at most a quarter of its compiled schemas for one account: another's stay compiled however many new ones an account sends", async () => {
    const checker = newChecker();
    const kept = JSON.stringify(object({ kept: { type: 'string', maxLength: salt++ } }));
    expect(await checker.compile(kept, 'account-a')).toEqual([]);
    for (let i = 0; i < 120; i++) expect(await checker.compile(JSON.stringify(object({ a: { type: 'string', maxLength: salt++ } })), 'flooding')).toEqual([]);
    // Answered from memory: no job, so no new thread either once this one is closed.
    await checker.close();
    expect(await checker.compile(kept, 'account-a')).toEqual([]);
    expect(checker.started).toBe(1);
  });

  it("answers a schema it compiled for one account from its memory for that account only, never for another's", async () => {
    const checker = newChecker();
    const schema = JSON.stringify(object({ a: { type: 'string', pattern: `^a{${(salt++ % 50) + 1}}$` } }));
    expect(await checker.compile(schema, 'account-a')).toEqual([]);
    // With no thread, whatever needs the thread starts one: a job was posted.
    await checker.close();

    expect(await checker.compile(schema, 'account-a')).toEqual([]);
    expect(checker.started).toBe(1);
    expect(await checker.compile(schema, 'account-b')).toEqual([]);
    expect(checker.started).toBe(2);
  });

  it("compiles a request's schema for the account the authorizer named (validateContract)", async () => {
    const json = { prompt: 'x', models: ['fam_c-5.4'], response_schema: object({ a: { type: 'string', maxLength: salt++ } }) };
    const check = (accountId: string) =>
      validateContract().before!({ event: { json, requestContext: { authorizer: { accountId } } } as unknown as ApiEvent } as Parameters<
        NonNullable<ReturnType<typeof validateContract>['before']>
      >[0]);
    await check('account-a');
    await schemaChecker().close();
    const started = schemaChecker().started;

    await check('account-a');
    expect(schemaChecker().started).toBe(started);
    await check('account-b');
    expect(schemaChecker().started).toBe(started + 1);
  });

  it('answers a request whose schema cannot be compiled now with a 503, not a 400: the schema passed the budget, the thread failed', async () => {
    const checker = newChecker();
    const request = validatePromptRequest({ prompt: 'x', models: ['fam_c-5.4'], response_schema: object({ a: { type: 'string' } }) });

    const compiling = compileRequestSchema(request, checker);
    await checker.close();

    await expect(compiling).rejects.toMatchObject({ status: 503, code: 'service_unavailable' });
  });

  it('refuses a schema ajv cannot compile with a 400 naming /response_schema', async () => {
    const request = validatePromptRequest({ prompt: 'x', models: ['fam_c-5.4'], response_schema: object({ a: { type: 'strin' } }) });
    await expect(compileRequestSchema(request, schemaChecker())).rejects.toMatchObject({
      status: 400,
      details: [{ field: '/response_schema', message: expect.stringContaining('is not a valid JSON Schema') }],
    });
  });
});
