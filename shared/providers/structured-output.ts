/**
 * For models without native schema enforcement (spec 1.5): the schema travels as a
 * strengthened instruction, and the output is validated against it afterwards.
 */
export function schemaInstruction(schema: Record<string, unknown>): string {
  return [
    'Answer with one JSON value only: no prose, no Markdown code fences.',
    'It must validate against this JSON Schema, with every required property present and no other properties:',
    JSON.stringify(schema),
  ].join('\n');
}
