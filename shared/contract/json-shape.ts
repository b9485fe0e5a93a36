/**
 * Whether a JSON value nests deeper than `depth` levels or holds more than `fields` object
 * fields and array elements, walked without recursion (a value nested a million levels
 * deep would overflow the stack) and left as soon as either is passed.
 */
export function exceeds(value: unknown, limits: { depth?: number; fields?: number }): boolean {
  const { depth: maxDepth = Infinity, fields: maxFields = Infinity } = limits;
  let fields = 0;
  const stack: [unknown, number][] = [[value, 1]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== 'object') continue;
    if (depth > maxDepth) return true;
    if (Array.isArray(node)) {
      // Elements count too, read by index: a huge array is no list of keys to build.
      for (let i = 0; i < node.length; i++) {
        if (++fields > maxFields) return true;
        stack.push([node[i], depth + 1]);
      }
      continue;
    }
    for (const key in node) {
      if (++fields > maxFields) return true;
      stack.push([(node as Record<string, unknown>)[key], depth + 1]);
    }
  }
  return false;
}
