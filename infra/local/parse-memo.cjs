'use strict';
// dynalite's expression parsers, remembered (the embedded store's thread loads this: store.ts).
//
// dynalite parses every request's condition, update and projection expressions with PEG
// parsers that backtrack: the reserve's condition alone took about 0.35 ms of the store's
// 0.85 ms on it, and parsing was over a quarter of the store thread's busy time. A request
// path sends a few expressions again and again, but with other names (a request's ID in a
// path) and other values (its amounts and times), which the parsers resolve as they go and
// whose values they read to check operand types. So a parse is remembered as a template,
// learnt once with stand-ins: each name's value a stand-in string (one per distinct value,
// so that paths compare equal exactly where the request's do), each value a proxy that
// records what the parser read of it. A later parse of the same expression, with names equal
// where the first's were and values that answer every recorded read the same, is the
// template with this request's names and values put back: what the parser would have made.
// Anything else (a parse that fails, a name spelt like a word of the expression, a value
// read in a way not recorded or read at length, an expression past DynamoDB's 4 KB) is parsed
// as dynalite parses it, and not remembered. What is remembered holds no request's values:
// the template marks where they go, and keeps only the short readings its checks made.

/** Stand-ins for names' values start with this, which no name of the gateway's holds (one that does is not remembered). */
const STAND_IN = '\u0000parse-memo:';
/** Expressions remembered per parser (the oldest forgotten first), and templates per expression (shapes of values). */
const MOST_EXPRESSIONS = 1000;
const MOST_TEMPLATES = 4;
/** The longest expression remembered: DynamoDB's limit, 4 KB (dynalite takes longer ones). */
const MOST_INPUT_CHARS = 4096;
/** The longest string a remembered parse may have read of a value (a type's name, a number): longer, it is not remembered. */
const MOST_READ_CHARS = 256;
/** Parses of an expression that could not be learnt (a failure, a value read otherwise) before it is no longer tried. */
const MOST_FAILED_LEARNINGS = 2;

/**
 * Puts a memory in front of a dynalite parser module's `parse(input, { context })`. Returns
 * counts of what it did, for the tests.
 * @param {{ parse: (input: string, options: { context: Record<string, unknown> }) => unknown }} parser
 */
function rememberParses(parser) {
  const parse = parser.parse;
  const stats = { remembered: 0, parsed: 0 };
  /** @type {Map<string, Expression>} */
  const expressions = new Map();
  parser.parse = function rememberedParse(input, options) {
    const context = options?.context;
    const key = typeof input === 'string' && input.length <= MOST_INPUT_CHARS && context && Object.keys(options).length === 1 ? keyOf(input, context) : undefined;
    let expression = key && expressions.get(key.text);
    if (key && !expression) {
      if (expressions.size >= MOST_EXPRESSIONS) expressions.delete(expressions.keys().next().value);
      // The expression's own words (a path's parts, a function's name), not its names' and values' placeholders.
      expression = { words: new Set(input.match(/(?<![#:A-Za-z0-9_])[A-Za-z0-9_]+/g)), templates: [], failed: 0 };
      expressions.set(key.text, expression);
    }
    // A name's value spelt like a word of the expression may be compared with it: not remembered.
    if (!key || !expression || [...key.valuesOf.values()].some((name) => expression.words.has(name))) {
      stats.parsed++;
      return parse.call(this, input, options);
    }
    const template = expression.templates.find((candidate) => answersAlike(candidate.reads, context.attrVals));
    if (template) {
      stats.remembered++;
      return filledIn(template, key, context);
    }
    stats.parsed++;
    const learning = expression.templates.length < MOST_TEMPLATES && expression.failed < MOST_FAILED_LEARNINGS;
    const learnt = learning ? learn(parse, this, input, context, key) : undefined;
    if (learnt === undefined) {
      if (learning) expression.failed++;
      return parse.call(this, input, options);
    }
    expression.templates.push(learnt);
    return filledIn(learnt, key, context);
  };
  return stats;
}

/**
 * @typedef {{ text: string, standIns: Record<string, string>, valuesOf: Map<string, string> }} Key
 * @typedef {{ words: Set<string>, templates: Template[], failed: number }} Expression
 * @typedef {{ path: string[], kind: 'get' | 'has' | 'own' | 'keys', property: string, read: unknown }} Read
 * @typedef {{ result: unknown, reads: Map<string, Map<string, Read>>, usedNames: string[], usedValues: string[] }} Template
 */

/** Where a template's result holds a request's value, or a part of one (an `M` value's map, say). */
class ValueAt {
  /** @param {string} name @param {string[]} path */
  constructor(name, path) {
    this.name = name;
    this.path = path;
  }
}

/**
 * What a parse depends on but values: the expression, which names there are and which of them
 * have equal values, which values there are; with the stand-ins of the names' values. Undefined
 * where a name's value is not a non-empty string or a value not an object: not remembered.
 * @returns {Key | undefined}
 */
function keyOf(input, context) {
  const names = context.attrNames ?? {};
  const values = context.attrVals ?? {};
  if (!plain(names) || !plain(values)) return undefined;
  /** @type {Record<string, string>} */
  const standIns = {};
  /** @type {Map<string, string>} a stand-in's value */
  const valuesOf = new Map();
  /** @type {Map<string, string>} a value's stand-in */
  const seen = new Map();
  const classes = [];
  for (const name of Object.keys(names).sort()) {
    const value = names[name];
    if (typeof value !== 'string' || value === '' || value.startsWith(STAND_IN)) return undefined;
    let standIn = seen.get(value);
    if (standIn === undefined) {
      standIn = `${STAND_IN}${seen.size}`;
      seen.set(value, standIn);
      valuesOf.set(standIn, value);
    }
    standIns[name] = standIn;
    classes.push(`${name}=${standIn.slice(STAND_IN.length)}`);
  }
  for (const name of Object.keys(values)) {
    const value = values[name];
    if (value === null || typeof value !== 'object') return undefined;
  }
  return { text: `${input}\u0000${classes.join(',')}\u0000${Object.keys(values).sort().join(',')}`, standIns, valuesOf };
}

function plain(object) {
  if (object === null || typeof object !== 'object' || Array.isArray(object)) return false;
  const prototype = Object.getPrototypeOf(object);
  return prototype === Object.prototype || prototype === null;
}

/** What a value (or a part of it) answers to one kind of reading: an object as 'object' or 'array', never itself. */
function observe(node, kind, property) {
  if (node === null || typeof node !== 'object') return undefined;
  if (kind === 'has') return property in node;
  if (kind === 'own') return Object.hasOwn(node, property);
  if (kind === 'keys') return Reflect.ownKeys(node).join('\u0000');
  const read = node[property];
  return read !== null && typeof read === 'object' ? (Array.isArray(read) ? 'array' : 'object') : read;
}

/**
 * Parses once with stand-ins for the names and recording proxies for the values: the
 * template, or undefined where the parse failed or read a value in a way not recorded.
 * @returns {Template | undefined}
 */
function learn(parse, parser, input, context, key) {
  const values = context.attrVals ?? {};
  /** @type {Map<string, Map<string, Read>>} a value's reads by their kind, path and property */
  const reads = new Map();
  /** @type {WeakMap<object, ValueAt>} */
  const proxies = new WeakMap();
  let unrecorded = false;
  const record = (name, target, path, kind, property) => {
    const read = observe(target, kind, property);
    // A long string read (a value's text checked) would keep that value: not remembered.
    if (typeof read === 'string' && read.length > MOST_READ_CHARS) unrecorded = true;
    const list = reads.get(name) ?? new Map();
    reads.set(name, list);
    list.set(`${kind}\u0000${path.join('\u0000')}\u0000${property}`, { path, kind, property, read });
  };
  const refuse = () => {
    unrecorded = true;
    return false;
  };
  const recorded = (name, target, path) => {
    const proxy = new Proxy(target, {
      get(value, property) {
        if (typeof property !== 'string') {
          unrecorded = true;
          return Reflect.get(value, property);
        }
        record(name, value, path, 'get', property);
        const read = value[property];
        return read !== null && typeof read === 'object' ? recorded(name, read, [...path, property]) : read;
      },
      has(value, property) {
        if (typeof property !== 'string') return refuse();
        record(name, value, path, 'has', property);
        return property in value;
      },
      ownKeys(value) {
        record(name, value, path, 'keys', '');
        return Reflect.ownKeys(value);
      },
      getOwnPropertyDescriptor(value, property) {
        if (typeof property !== 'string') {
          unrecorded = true;
          return Reflect.getOwnPropertyDescriptor(value, property);
        }
        record(name, value, path, 'own', property);
        const descriptor = Reflect.getOwnPropertyDescriptor(value, property);
        // Its value read as `get` reads it: recorded, and an object still a recording proxy.
        return descriptor && 'value' in descriptor ? { ...descriptor, value: proxy[property] } : descriptor;
      },
      set: refuse,
      deleteProperty: refuse,
      defineProperty: refuse,
      setPrototypeOf: refuse,
      preventExtensions: refuse,
    });
    proxies.set(proxy, new ValueAt(name, path));
    return proxy;
  };
  /** @type {Record<string, object>} */
  const standInValues = {};
  for (const name of Object.keys(values)) standInValues[name] = recorded(name, values[name], []);
  const unusedNames = Object.fromEntries(Object.keys(key.standIns).map((name) => [name, true]));
  const unusedValues = Object.fromEntries(Object.keys(values).map((name) => [name, true]));
  let result;
  try {
    result = parse.call(parser, input, {
      context: { ...context, attrNames: key.standIns, attrVals: standInValues, unusedAttrNames: unusedNames, unusedAttrVals: unusedValues },
    });
  } catch {
    return undefined;
  }
  // A failure's message may name a stand-in: the request's own parse says it.
  if (unrecorded || result === null || typeof result !== 'object' || !copiable(result, proxies, key.valuesOf)) return undefined;
  return {
    // The values' proxies marked, not kept: a template holds none of the request's values.
    result: rebuilt(
      result,
      (node) => proxies.get(node),
      (text) => text,
    ),
    reads,
    usedNames: Object.keys(key.standIns).filter((name) => !(name in unusedNames)),
    usedValues: Object.keys(values).filter((name) => !(name in unusedValues)),
  };
}

/**
 * Whether a parse's result holds only what rebuilt copies: plain objects, arrays, primitives,
 * the values' proxies, and stand-ins only as whole strings (one the parser made part of a
 * longer string would stay in the copy).
 */
function copiable(result, proxies, valuesOf) {
  const text = (string) => valuesOf.has(string) || !string.includes(STAND_IN);
  const seen = new Set();
  const visit = (node) => {
    if (typeof node === 'string') return text(node);
    if (node === null || typeof node !== 'object' || proxies.has(node) || seen.has(node)) return typeof node !== 'function' && typeof node !== 'symbol';
    seen.add(node);
    if (!Array.isArray(node) && !plain(node)) return false;
    return Object.keys(node).every((property) => text(property) && visit(node[property]));
  };
  return visit(result);
}

/** Whether this request's values answer every reading the template's parse made of its values as they answered it. */
function answersAlike(reads, values) {
  for (const [name, list] of reads) {
    for (const { path, kind, property, read } of list.values()) {
      let node = values?.[name];
      for (const step of path) node = node === null || typeof node !== 'object' ? undefined : node[step];
      if (!Object.is(observe(node, kind, property), read)) return false;
    }
  }
  return true;
}

/**
 * A copy of a parse's result, its objects and arrays new (shared ones shared alike, and each
 * with its prototype), `leaf(node)` in place of a node it answers for, `text(string)` for
 * each string and key. Keys are assigned as the parser assigned them (a key `__proto__` of an
 * object without a prototype is a key).
 */
function rebuilt(result, leaf, text) {
  const copies = new Map();
  const copy = (node) => {
    if (typeof node === 'string') return text(node);
    if (node === null || typeof node !== 'object') return node;
    const replaced = leaf(node);
    if (replaced !== undefined) return replaced;
    const made = copies.get(node);
    if (made) return made;
    if (Array.isArray(node)) {
      const array = [];
      copies.set(node, array);
      for (const item of node) array.push(copy(item));
      return array;
    }
    const object = Object.create(Object.getPrototypeOf(node));
    copies.set(node, object);
    for (const property of Object.keys(node)) object[text(property)] = copy(node[property]);
    return object;
  };
  return copy(result);
}

/**
 * The template's result with this request's names and values in place of the stand-ins and
 * the marks (a fresh copy: dynalite may change what it is given), and the names and values it
 * uses struck off the request's unused ones, as the parse would have.
 */
function filledIn(template, key, context) {
  for (const name of template.usedNames) if (context.unusedAttrNames) delete context.unusedAttrNames[name];
  for (const name of template.usedValues) if (context.unusedAttrVals) delete context.unusedAttrVals[name];
  const valueAt = (node) => {
    if (!(node instanceof ValueAt)) return undefined;
    let value = context.attrVals[node.name];
    for (const step of node.path) value = value[step];
    return value;
  };
  return rebuilt(template.result, valueAt, (text) => key.valuesOf.get(text) ?? text);
}

module.exports = { rememberParses, STAND_IN };
