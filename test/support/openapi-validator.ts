import type { ErrorObject, ValidateFunction } from 'ajv';
import { createAjv } from '../../shared/contract/ajv.js';
import { PROMPT_OPERATION, openApiDocument } from '../../shared/contract/openapi.js';

/**
 * Validates an answer of the gateway against the OpenAPI document: the status must be one
 * the operation documents (or its `default`), the content type one of that response's
 * media types, its required headers present, and the body valid against its schema
 * (ajv, JSON Schema 2020-12: the dialect of OpenAPI 3.1).
 */

const BASE = 'https://gateway.local/openapi.json';

interface CompiledResponse {
  key: string;
  mediaTypes: string[];
  requiredHeaders: string[];
  validate: ValidateFunction;
}

let compiled: ((status: number) => CompiledResponse | undefined) | undefined;

/** `#/components/schemas/X` references made absolute (`<BASE>#/$defs/X`), so that each response schema compiles against the document's schemas. */
function absolute<T>(value: T): T {
  return JSON.parse(JSON.stringify(value).replaceAll('"$ref":"#/components/schemas/', `"$ref":"${BASE}#/$defs/`)) as T;
}

function build(): (status: number) => CompiledResponse | undefined {
  const document = openApiDocument();
  const ajv = createAjv({ allErrors: true, strict: true, allowUnionTypes: true });
  // The component schemas as one schema resource; the rest of the document is not JSON Schema.
  ajv.addSchema({ $id: BASE, $defs: absolute(document.components.schemas) });
  const operation = document.paths[PROMPT_OPERATION.path][PROMPT_OPERATION.method];
  const byKey = new Map<string, CompiledResponse>();
  for (const [key, declared] of Object.entries<Record<string, any>>(operation.responses)) {
    const response = resolve(document, declared);
    const content = (response.content ?? {}) as Record<string, { schema: unknown }>;
    const mediaTypes = Object.keys(content);
    const first = content[mediaTypes[0] as string];
    if (!first) throw new Error(`OpenAPI response ${key} has no content`);
    const headers = (response.headers ?? {}) as Record<string, { required?: boolean }>;
    byKey.set(key, {
      key,
      mediaTypes,
      requiredHeaders: Object.entries(headers)
        .filter(([, h]) => h.required)
        .map(([name]) => name.toLowerCase()),
      validate: ajv.compile(absolute(first.schema as object)),
    });
  }
  return (status) => byKey.get(String(status)) ?? (status >= 400 ? byKey.get('default') : undefined);
}

function resolve(document: Record<string, any>, value: Record<string, any>): Record<string, any> {
  if (typeof value.$ref !== 'string') return value;
  const path = (value.$ref as string).replace(/^#\//, '').split('/');
  return path.reduce<any>((node, part) => node?.[part.replaceAll('~1', '/').replaceAll('~0', '~')], document);
}

function ensureBuilt(): (status: number) => CompiledResponse | undefined {
  compiled ??= build();
  return compiled;
}

export interface OpenApiCheck {
  status: number;
  headers: Headers | Record<string, string | undefined>;
  body: unknown;
}

/** The problems of an answer against the document; empty when it conforms. */
export function openApiProblems(answer: OpenApiCheck): string[] {
  const response = ensureBuilt()(answer.status);
  if (!response) return [`status ${answer.status} is not documented for POST ${PROMPT_OPERATION.path}`];
  const problems: string[] = [];
  const header = (name: string) => (answer.headers instanceof Headers ? (answer.headers.get(name) ?? undefined) : (answer.headers[name] ?? answer.headers[name.toLowerCase()]));
  const contentType = header('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (!contentType || !response.mediaTypes.includes(contentType)) {
    problems.push(`content-type ${contentType ?? '(none)'} is not one of ${response.mediaTypes.join(', ')} (response ${response.key})`);
  }
  for (const name of response.requiredHeaders) if (header(name) === undefined) problems.push(`header ${name} is missing (response ${response.key})`);
  if (!response.validate(answer.body)) problems.push(...describe(response.validate.errors ?? [], response.key));
  return problems;
}

/** Throws, naming every problem and the body, when an answer does not conform to the document. */
export function assertMatchesOpenApi(answer: OpenApiCheck): void {
  const problems = openApiProblems(answer);
  if (problems.length > 0) {
    const body = JSON.stringify(answer.body)?.slice(0, 2000);
    throw new Error(`Answer ${answer.status} does not match the OpenAPI document:\n  ${problems.join('\n  ')}\nbody: ${body}`);
  }
}

function describe(errors: readonly ErrorObject[], key: string): string[] {
  return errors.map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)} (response ${key}, schema ${e.schemaPath})`);
}
