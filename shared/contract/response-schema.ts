import type { FieldError } from '../errors.js';
import { codePoints } from '../text/characters.js';
import { LIMITS } from './limits.js';
import { escapePointer, unescapePointer } from './pointer.js';

/** Keywords whose value is a map of subschemas, or a subschema / list of subschemas. */
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'];
const SCHEMA_VALUES = ['items', 'additionalItems', 'contains', 'not', 'if', 'then', 'else', 'unevaluatedItems', 'propertyNames', 'additionalProperties', 'unevaluatedProperties'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];

/**
 * `response_schema` rules (spec 2.5) that are cheap enough for the main thread (a walk of
 * at most 100 objects, nothing compiled): a JSON Schema whose root is an object, with
 * `additionalProperties: false` at every object level (strict structured output needs
 * it), small enough to send to every model and to compile (the budget in limits.ts).
 * Whether its patterns are ECMA-262 regexes that RE2 can run (parsing ten patterns of
 * Unicode classes costs V8 about 3 ms) and whether ajv compiles it is
 * `compileResponseSchema`'s (schema-compile.ts), on the schema thread.
 */
export function checkResponseSchema(schema: Record<string, unknown>, path: string): FieldError[] {
  // Bytes, as the message says: 65,000 characters of CJK text are 195,000 of them.
  if (Buffer.byteLength(JSON.stringify(schema)) > LIMITS.responseSchemaBytes) {
    return [{ field: path, message: `must be at most ${LIMITS.responseSchemaBytes} bytes of JSON` }];
  }
  const objects = countObjects(schema);
  if (objects > LIMITS.responseSchemaObjects) {
    return [{ field: path, message: `holds ${objects} objects (subschemas); the limit is ${LIMITS.responseSchemaObjects}` }];
  }
  const state = walkSchema(schema, path);
  if (schema.type !== 'object') state.errors.unshift({ field: `${path}/type`, message: 'the root of response_schema must be "object"' });
  if (state.errors.length === 0 && expandedSize(schema, state.refs) > LIMITS.responseSchemaExpanded) {
    state.errors.push({
      field: path,
      message: `expands to more than ${LIMITS.responseSchemaExpanded} subschemas through its $refs (each counting the subschema it points to, as an output is checked against it): share fewer references, or nest fewer anyOf, oneOf or allOf of them`,
    });
  }
  return state.errors;
}

/**
 * How many subschemas an output can be checked against along the schema, each `$ref` (and
 * `$dynamicRef`) counted as the subschema it points to, as ajv's generated code calls it:
 * each node once per way to reach it. Counted up to just past `LIMITS.responseSchemaExpanded`
 * (each node's count memoized, so a walk of the schema's own objects); a reference back into
 * the path that reaches it (recursion, which each output's depth bounds) counts 1.
 */
function expandedSize(root: object, refs: Refs): number {
  const cap = LIMITS.responseSchemaExpanded + 1;
  const sizes = new Map<object, number>();
  const onPath = new Set<object>();
  const size = (node: object): number => {
    const known = sizes.get(node);
    if (known !== undefined) return known;
    if (onPath.has(node)) return 1;
    onPath.add(node);
    let total = 1;
    for (const child of [...subschemas(node as Record<string, unknown>), ...(refs.targets.get(node) ?? [])]) {
      total = Math.min(cap, total + size(child));
      if (total >= cap) break;
    }
    onPath.delete(node);
    sizes.set(node, total);
    return total;
  };
  return size(root);
}

/** A subschema's own subschemas that apply to an output (not its `$defs` and `definitions`: those apply only where a reference points). */
function subschemas(schema: Record<string, unknown>): object[] {
  const found: object[] = [];
  eachSubschema(schema, (sub, key) => {
    if (key !== '$defs' && key !== 'definitions' && sub !== null && typeof sub === 'object' && !Array.isArray(sub)) found.push(sub);
  });
  return found;
}

/**
 * Keywords that say which properties an object holds: a subschema with any of them describes
 * an object, whether or not it says `type: "object"`. Not the keywords that only require
 * (`required`, `dependentRequired`): `anyOf: [{required: ["a"]}, {required: ["b"]}]` applies to
 * its parent's properties, and `additionalProperties: false` beside either would forbid them.
 */
const OBJECT_KEYWORDS = ['properties', 'additionalProperties', 'patternProperties', 'propertyNames', 'unevaluatedProperties'];

function isObjectLevel(schema: Record<string, unknown>): boolean {
  const type = schema.type;
  return type === 'object' || (Array.isArray(type) && type.includes('object')) || OBJECT_KEYWORDS.some((keyword) => keyword in schema);
}

/** Every JSON object in `value`, counted without recursion (the request's nesting was bounded before). */
function countObjects(value: unknown): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (!Array.isArray(node)) count++;
    for (const child of Object.values(node)) stack.push(child);
  }
  return count;
}

/** What the walk found so far: the errors, the `enum` values and repetitions counted, and the patterns with their fields. */
type WalkState = { errors: FieldError[]; enumValues: number; dependentNames: number; patterns: { pattern: string; field: string }[]; repeats: number; refs: Refs };

/**
 * The subschemas the walk checked, and the references to check once it has: a `$ref` can
 * point anywhere in the schema's JSON, beneath a keyword the walk does not know too, where
 * an object level without `additionalProperties: false` would pass unchecked.
 */
interface Refs {
  walked: Set<object>;
  /** Each `$ref` and `$dynamicRef` with its field and the base URI it resolves against (its resource's), and the subschema that holds it. */
  found: { ref: string; field: string; base: string; holder: object }[];
  /** The subschemas each subschema's references point to, once resolved (expandedSize). */
  targets: Map<object, object[]>;
  /** The resources (the root, and each subschema with an `$id`) by their URI resolved as ajv resolves it, and the anchors (`$anchor`, `$dynamicAnchor`) of each. */
  ids: Map<string, object>;
  anchors: Map<object, Map<string, object>>;
}

/** A resource: a schema and the URI its `$id` resolves to, which its references resolve against. */
type Resource = { node: object; uri: string };

/** The base URI of a schema without an `$id`: any absolute one, a relative `$id` or `$ref` resolved against it as against any other. */
const ROOT_URI = 'https://response-schema.invalid/root.json';

export function walkSchema(schema: Record<string, unknown>, path: string): WalkState {
  const refs: Refs = { walked: new Set(), found: [], targets: new Map(), ids: new Map(), anchors: new Map() };
  const state: WalkState = { errors: [], enumValues: 0, dependentNames: 0, patterns: [], repeats: 0, refs };
  walk(schema, path, 0, state, { node: schema, uri: ROOT_URI });
  for (const { ref, field, base, holder } of refs.found) {
    const target = walkedTarget(ref, base, refs);
    if (target === undefined) state.errors.push({ field, message: UNCHECKED_REF });
    else refs.targets.set(holder, [...(refs.targets.get(holder) ?? []), target]);
  }
  return state;
}

const UNCHECKED_REF = 'must point to a subschema the gateway checks: one under a schema keyword ($defs, properties, items and the like), or a resource or anchor declared there';

/** `ref` resolved against `base`, its fragment apart; undefined where it is no URI reference. */
function resolved(ref: string, base: string): { uri: string; fragment: string } | undefined {
  let url: URL;
  try {
    url = new URL(ref, base);
  } catch {
    return undefined;
  }
  const fragment = url.hash.slice(1);
  url.hash = '';
  return { uri: url.href, fragment };
}

/** The subschema the walk checked that a reference resolves to, as ajv resolves it; undefined where there is none, or the gateway cannot tell. */
function walkedTarget(ref: string, base: string, refs: Refs): object | undefined {
  const target = resolved(ref, base);
  const resource = target && refs.ids.get(target.uri);
  if (!target || resource === undefined) return undefined;
  const { fragment } = target;
  if (fragment === '') return refs.walked.has(resource) ? resource : undefined;
  if (!fragment.startsWith('/')) return refs.anchors.get(resource)?.get(safeDecode(fragment) ?? '');
  let node: unknown = resource;
  for (const raw of fragment.slice(1).split('/')) {
    const decoded = safeDecode(raw);
    if (decoded === undefined) return undefined;
    const segment = unescapePointer(decoded);
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, segment)) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node !== null && typeof node === 'object' && refs.walked.has(node) ? node : undefined;
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

function walk(node: unknown, path: string, depth: number, state: WalkState, resource: Resource): void {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
  const { errors, refs } = state;
  if (depth > LIMITS.responseSchemaDepth) {
    errors.push({ field: path, message: `nests deeper than ${LIMITS.responseSchemaDepth} levels` });
    return;
  }
  const schema = node as Record<string, unknown>;
  refs.walked.add(schema);
  // A new resource where an `$id` names one (not a bare fragment, an older draft's anchor, which ajv 2020 refuses anyway).
  const id = typeof schema.$id === 'string' && !schema.$id.startsWith('#') ? resolved(schema.$id, resource.uri) : undefined;
  if (id) resource = { node: schema, uri: id.uri };
  if (depth === 0 || id) refs.ids.set(resource.uri, schema);
  for (const keyword of ['$anchor', '$dynamicAnchor']) {
    const anchor = schema[keyword];
    if (typeof anchor !== 'string') continue;
    const known = refs.anchors.get(resource.node) ?? new Map<string, object>();
    refs.anchors.set(resource.node, known.set(anchor, schema));
  }
  for (const keyword of ['$ref', '$dynamicRef']) {
    const ref = schema[keyword];
    if (typeof ref === 'string') refs.found.push({ ref, field: `${path}/${keyword}`, base: resource.uri, holder: schema });
  }
  if (isObjectLevel(schema) && schema.additionalProperties !== false) {
    errors.push({ field: `${path}/additionalProperties`, message: 'must be false at every object level of response_schema' });
  }
  checkCosts(schema, path, state);
  checkPropertyNames(schema, path, errors);
  eachSubschema(schema, (sub, key, member) => walk(sub, `${path}/${key}${member === undefined ? '' : `/${escapePointer(String(member))}`}`, depth + 1, state, resource));
}

/**
 * Each value under `schema`'s subschema keywords, handed to `each` with its keyword and, in a
 * map or a list, its name or index: what the walk checks, and expandedSize counts.
 */
function eachSubschema(schema: Record<string, unknown>, each: (sub: unknown, key: string, member?: string | number) => void): void {
  for (const key of SCHEMA_MAPS) {
    const map = schema[key];
    if (map && typeof map === 'object' && !Array.isArray(map)) for (const [name, sub] of Object.entries(map)) each(sub, key, name);
  }
  for (const key of SCHEMA_VALUES) each(schema[key], key);
  for (const key of SCHEMA_LISTS) {
    const list = schema[key];
    if (Array.isArray(list)) list.forEach((sub, i) => void each(sub, key, i));
  }
}

/**
 * A property named `__proto__`, which ajv leaves out of the validators it makes (its own
 * guard against prototype pollution): declared, an output holding it would never conform
 * (`additionalProperties: false` refuses what the validator does not know); required, one
 * without it would. Refused, so that no check of an output is wrong.
 */
function checkPropertyNames(schema: Record<string, unknown>, path: string, errors: FieldError[]): void {
  const { properties, required } = schema;
  if (properties && typeof properties === 'object' && Object.hasOwn(properties, '__proto__')) {
    errors.push({ field: `${path}/properties/__proto__`, message: 'cannot be checked by the gateway: rename the property' });
  }
  if (Array.isArray(required)) {
    const at = required.indexOf('__proto__');
    if (at >= 0) errors.push({ field: `${path}/required/${at}`, message: 'cannot be checked by the gateway: rename the property' });
  }
}

/**
 * The keywords whose cost grows with the schema or the output: patterns (which must run on
 * RE2), enums, and the names of `dependentRequired` lists (`uniqueItems` is the gateway's own
 * keyword, one pass over the items whatever they hold: schema-compile.ts).
 */
function checkCosts(schema: Record<string, unknown>, path: string, state: WalkState): void {
  const { errors } = state;
  if (typeof schema.pattern === 'string') checkPattern(schema.pattern, `${path}/pattern`, state);
  const patternProperties = schema.patternProperties;
  if (patternProperties && typeof patternProperties === 'object' && !Array.isArray(patternProperties)) {
    for (const key of Object.keys(patternProperties)) checkPattern(key, `${path}/patternProperties/${escapePointer(key)}`, state);
  }
  if (Array.isArray(schema.enum)) {
    state.enumValues += schema.enum.length;
    if (state.enumValues > LIMITS.responseSchemaEnumValues) {
      errors.push({ field: `${path}/enum`, message: `brings the enum values of response_schema past ${LIMITS.responseSchemaEnumValues}` });
    }
  }
  for (const keyword of ['dependentRequired', 'dependencies']) {
    const lists = schema[keyword];
    if (lists === null || typeof lists !== 'object' || Array.isArray(lists)) continue;
    for (const [name, list] of Object.entries(lists as Record<string, unknown>)) {
      if (!Array.isArray(list)) continue;
      state.dependentNames += list.length;
      if (state.dependentNames > LIMITS.responseSchemaDependentNames) {
        errors.push({
          field: `${path}/${keyword}/${escapePointer(name)}`,
          message: `brings the names of response_schema's dependentRequired lists past ${LIMITS.responseSchemaDependentNames}`,
        });
        return;
      }
    }
  }
}

/** The counts of `{n}`, `{n,}` and `{n,m}` (the larger of each) summed: read without a regex that could itself backtrack. */
function repeatCount(pattern: string): number {
  let total = 0;
  for (let open = pattern.indexOf('{'); open !== -1; open = pattern.indexOf('{', open + 1)) {
    const close = pattern.indexOf('}', open);
    if (close === -1) break;
    const counts = pattern.slice(open + 1, close).split(',');
    if (counts.length > 2 || !counts.every((c, i) => /^\d+$/.test(c) || (i === 1 && c === ''))) continue;
    total += Math.max(...counts.map((count) => (count === '' ? 0 : Number(count))));
  }
  return total;
}

function checkPattern(pattern: string, field: string, state: WalkState): void {
  const { errors } = state;
  state.patterns.push({ pattern, field });
  if (state.patterns.length > LIMITS.responseSchemaPatterns) {
    errors.push({ field, message: `is one pattern more than the ${LIMITS.responseSchemaPatterns} a response_schema may hold` });
    return;
  }
  // Characters as every other limit counts them: an emoji is one.
  if (pattern.length > LIMITS.responseSchemaPatternChars && codePoints(pattern) > LIMITS.responseSchemaPatternChars) {
    errors.push({ field, message: `must be at most ${LIMITS.responseSchemaPatternChars} characters` });
    return;
  }
  state.repeats += repeatCount(pattern);
  if (state.repeats > LIMITS.responseSchemaPatternRepeat) {
    errors.push({ field, message: `brings the counted repetitions ({n,m}) of response_schema's patterns past ${LIMITS.responseSchemaPatternRepeat}` });
  }
}
