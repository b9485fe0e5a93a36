import { promptRequestSchema } from './request-schema.js';

type Schema = Record<string, unknown>;

/** The subschemas that may describe a value: the schema itself and its oneOf / anyOf branches. */
function branches(schema: Schema): Schema[] {
  const alternatives = [...((schema.oneOf as Schema[] | undefined) ?? []), ...((schema.anyOf as Schema[] | undefined) ?? [])];
  return [schema, ...alternatives.flatMap(branches)];
}

/**
 * The field names the request schema knows for the object at a JSON pointer of the body
 * (`/generation_settings`, `/model_tuning/fam_c-5.4`, `/history/0`): what an unknown field
 * there was probably meant to be.
 */
export function knownFieldsAt(pointer: string): string[] {
  let schemas: Schema[] = [promptRequestSchema as unknown as Schema];
  for (const segment of pointer.split('/').slice(1)) {
    schemas = schemas.flatMap(branches).flatMap((schema) => {
      const properties = schema.properties as Record<string, Schema> | undefined;
      if (properties && segment in properties) return [properties[segment] as Schema];
      if (/^\d+$/.test(segment) && schema.items && typeof schema.items === 'object') return [schema.items as Schema];
      if (schema.additionalProperties && typeof schema.additionalProperties === 'object') return [schema.additionalProperties as Schema];
      return [];
    });
  }
  return [...new Set(schemas.flatMap(branches).flatMap((schema) => Object.keys((schema.properties as Record<string, unknown> | undefined) ?? {})))];
}
