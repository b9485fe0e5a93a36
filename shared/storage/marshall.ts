/** DynamoDB's attribute-value JSON, as the wire protocol carries it. */
export type AttributeValue =
  | { S: string }
  | { N: string }
  | { B: string }
  | { BOOL: boolean }
  | { NULL: true }
  | { L: AttributeValue[] }
  | { M: Record<string, AttributeValue> }
  | { SS: string[] }
  | { NS: string[] }
  | { BS: string[] };

/** An item in (any object: its `undefined` members are left out) and out. */
export type Item = Record<string, any>;

/** A plain value to its attribute value; `undefined` members of objects are left out, as the document client's `removeUndefinedValues` did. */
export function toAttribute(value: unknown, path = 'value'): AttributeValue {
  if (value === null) return { NULL: true };
  switch (typeof value) {
    case 'string':
      return { S: value };
    case 'boolean':
      return { BOOL: value };
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${path}: DynamoDB cannot store ${value}`);
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) throw new RangeError(`${path}: ${value} is beyond the integers a number holds exactly; use a bigint`);
      return { N: String(value) };
    case 'bigint':
      return { N: value.toString() };
    case 'object':
      if (value instanceof Uint8Array) return { B: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') };
      // Undefined members are left out, as in objects.
      if (Array.isArray(value)) return { L: value.flatMap((member, i) => (member === undefined ? [] : [toAttribute(member, `${path}[${i}]`)])) };
      if (value instanceof Set) {
        const members = [...value];
        if (members.length > 0 && members.every((m) => typeof m === 'string')) return { SS: members };
        if (members.length > 0 && members.every((m) => typeof m === 'number')) return { NS: members.map(String) };
        throw new TypeError(`${path}: a set must hold strings or numbers only, and at least one`);
      }
      const prototype = Object.getPrototypeOf(value);
      // A Date, Map, typed array or class instance would silently become an empty map.
      if (prototype !== Object.prototype && prototype !== null) throw new TypeError(`${path}: DynamoDB cannot store a ${prototype?.constructor?.name ?? 'object'}; convert it first`);
      return { M: toAttributes(value as Item, path) };
    default:
      throw new TypeError(`${path}: DynamoDB cannot store a ${typeof value}`);
  }
}

export function toAttributes(item: object, path = 'item'): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const [key, member] of Object.entries(item)) {
    if (member !== undefined) out[key] = toAttribute(member, `${path}.${key}`);
  }
  return out;
}

export function fromAttribute(attribute: AttributeValue): unknown {
  if ('S' in attribute) return attribute.S;
  if ('N' in attribute) return toNumber(attribute.N);
  if ('BOOL' in attribute) return attribute.BOOL;
  if ('NULL' in attribute) return null;
  if ('M' in attribute) return fromAttributes(attribute.M);
  if ('L' in attribute) return attribute.L.map(fromAttribute);
  if ('B' in attribute) return new Uint8Array(Buffer.from(attribute.B, 'base64'));
  if ('SS' in attribute) return new Set(attribute.SS);
  if ('NS' in attribute) return new Set(attribute.NS.map(toNumber));
  if ('BS' in attribute) return new Set(attribute.BS.map((b) => new Uint8Array(Buffer.from(b, 'base64'))));
  throw new TypeError(`Unknown attribute value type: ${Object.keys(attribute).join(', ')}`);
}

/** A stored number; one that a JavaScript number cannot hold exactly is refused rather than rounded. */
function toNumber(text: string): number {
  const value = Number(text);
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) throw new RangeError(`The stored number ${text} is beyond the integers a number holds exactly`);
  return value;
}

export function fromAttributes(attributes: Record<string, AttributeValue>): Item {
  const out: Item = {};
  for (const [key, attribute] of Object.entries(attributes)) out[key] = fromAttribute(attribute);
  return out;
}
