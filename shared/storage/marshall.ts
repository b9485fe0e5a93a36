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
  | { NS: string[] };

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
      return { N: String(value) };
    case 'bigint':
      return { N: value.toString() };
    case 'object':
      if (value instanceof Uint8Array) return { B: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') };
      if (Array.isArray(value)) return { L: value.map((member, i) => toAttribute(member, `${path}[${i}]`)) };
      if (value instanceof Set) {
        const members = [...value];
        if (members.length > 0 && members.every((m) => typeof m === 'string')) return { SS: members };
        if (members.length > 0 && members.every((m) => typeof m === 'number')) return { NS: members.map(String) };
        throw new TypeError(`${path}: a set must hold strings or numbers only, and at least one`);
      }
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
  if ('N' in attribute) return Number(attribute.N);
  if ('BOOL' in attribute) return attribute.BOOL;
  if ('NULL' in attribute) return null;
  if ('M' in attribute) return fromAttributes(attribute.M);
  if ('L' in attribute) return attribute.L.map(fromAttribute);
  if ('B' in attribute) return new Uint8Array(Buffer.from(attribute.B, 'base64'));
  if ('SS' in attribute) return new Set(attribute.SS);
  if ('NS' in attribute) return new Set(attribute.NS.map(Number));
  throw new TypeError(`Unknown attribute value type: ${Object.keys(attribute).join(', ')}`);
}

export function fromAttributes(attributes: Record<string, AttributeValue>): Item {
  const out: Item = {};
  for (const [key, attribute] of Object.entries(attributes)) out[key] = fromAttribute(attribute);
  return out;
}
